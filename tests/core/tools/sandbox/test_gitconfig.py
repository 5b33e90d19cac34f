"""A repository config's stand-in: what git needs stays, whatever can hold a credential goes,
and a config holding nothing to drop needs no stand-in."""

from __future__ import annotations

import subprocess
from pathlib import Path

from core.tools.sandbox.gitconfig import holds_more, is_repository_config, sanitized
from core.tools.sandbox.masks import find_sensitive
from tests.fakes.workspace import put

TOKEN = "ghp-NOT-A-REAL-TOKEN"
WITH_CREDENTIALS = f"""\
[core]
\trepositoryformatversion = 1
\tbare = false
\tlogallrefupdates
\tsshCommand = sshpass -p {TOKEN} ssh
[extensions]
\tobjectformat = sha1
[remote "origin"]
\turl = https://ada:{TOKEN}@example.org/r.git?access_token={TOKEN}
\tpushurl = ada:{TOKEN}@example.org:r.git
\tfetch = +refs/heads/*:refs/remotes/origin/*
\tproxy = http://ada:{TOKEN}@proxy.example.org:3128
[branch "main"]
\tremote = origin
\tmerge = refs/heads/main
[http "https://example.org/"]
\textraheader = AUTHORIZATION: bearer {TOKEN}
[url "https://ada:{TOKEN}@example.org/"]
\tinsteadOf = https://example.org/
[credential]
\thelper = "!f() {{ echo password={TOKEN}; }}; f"
[include]
\tpath = ../secrets.inc
""".encode()
PLAIN = b'[core]\n\tbare = false\n[remote "origin"]\n\turl = /srv/r.git\n'


def config_of(text: bytes, tmp_path: Path, key: str, *options: str) -> str:
    """What git itself reads for `key` in `text`."""
    path = tmp_path / "config"
    path.write_bytes(text)
    done = subprocess.run(
        ["git", "config", "--file", str(path), *options, "--get-all", key],
        capture_output=True,
        text=True,
        check=False,
    )
    return done.stdout.strip()


def test_the_stand_in_keeps_what_git_needs(tmp_path: Path) -> None:
    kept = sanitized(WITH_CREDENTIALS)
    assert config_of(kept, tmp_path, "core.repositoryformatversion") == "1"
    assert config_of(kept, tmp_path, "extensions.objectformat") == "sha1"
    assert (
        config_of(kept, tmp_path, "core.logallrefupdates", "--bool") == "true"
    )  # a bare key: true
    assert config_of(kept, tmp_path, "branch.main.merge") == "refs/heads/main"
    assert config_of(kept, tmp_path, "remote.origin.fetch") == "+refs/heads/*:refs/remotes/origin/*"
    assert config_of(kept, tmp_path, "remote.origin.url") == "https://example.org/r.git"
    assert config_of(kept, tmp_path, "remote.origin.pushurl") == "example.org:r.git"
    assert config_of(kept, tmp_path, "remote.origin.proxy") == "http://proxy.example.org:3128"


def test_the_stand_in_drops_every_credential(tmp_path: Path) -> None:
    kept = sanitized(WITH_CREDENTIALS)
    assert TOKEN.encode() not in kept
    for key in ("http.https://example.org/.extraheader", "credential.helper", "include.path"):
        assert config_of(kept, tmp_path, key) == "", key
    assert b"insteadof" not in kept.lower()


def test_only_a_config_holding_something_to_drop_is_masked() -> None:
    assert holds_more(WITH_CREDENTIALS)
    assert not holds_more(PLAIN)
    assert not holds_more(sanitized(WITH_CREDENTIALS))  # the stand-in is its own fixed point
    assert not holds_more(b"")
    assert holds_more(b"[core\nbroken")  # git cannot read it: masked whole
    assert sanitized(b"[core\nbroken") == b""


def test_the_scan_masks_a_config_with_credentials_by_its_stand_in(tmp_path: Path) -> None:
    put(tmp_path / "a" / ".git" / "config", WITH_CREDENTIALS.decode())
    put(tmp_path / "b" / ".git" / "config", PLAIN.decode())
    found = find_sensitive(tmp_path)
    assert found.files == {"a/.git/config"}
    assert dict(found.contents) == {"a/.git/config": sanitized(WITH_CREDENTIALS)}
    assert is_repository_config("a/.git/config")
    assert not is_repository_config("a/git/config")
