"""A repository's config as the sandbox may see it: what git needs, no credentials.

git must read `.git/config` to work at all (the repository format, `extensions.objectformat`,
`core.*`, which branch tracks which remote), so an empty stand-in would break it; but the
same file can hold credentials: a token in a remote's URL, an `http.*.extraheader`, a
`credential` helper, a `url.*.insteadOf` that rewrites to a URL with a password. Its stand-in
keeps only an allowlist (core but its ssh command and askpass, extensions, branch, and each
remote's settings, every URL without user, password, query and fragment); a config that
keeps all it holds needs no stand-in at all, so git in the sandbox writes it as freely as on
the host, and a dry run shows such a change on its card.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
from urllib.parse import urlsplit, urlunsplit

KEPT_SECTIONS = frozenset({"core", "extensions", "branch", "remote"})
# Kept sections' keys that run a program which may be given a password on its command line.
DROPPED_KEYS = frozenset({("core", "sshcommand"), ("core", "askpass")})
_TIMEOUT = 10.0
_REMEMBERED = 64
_STAND_INS: dict[bytes, bytes | None] = {}  # sha256 of a config -> its stand-in
_PATH = os.environ.get("PATH", "/usr/bin:/bin")  # no user or system config is read


def is_repository_config(path: str) -> bool:
    """Whether a workspace path (relative, posix) is a repository's `.git/config`."""
    return path == ".git/config" or path.endswith("/.git/config")


def stand_in(raw: bytes) -> bytes | None:
    """What the sandbox sees of a repository config `raw`: its stand-in, or None when it
    needs none. Remembered by content (the scan before every command asks again)."""
    key = hashlib.sha256(raw).digest()
    if key not in _STAND_INS:
        if len(_STAND_INS) >= _REMEMBERED:
            _STAND_INS.pop(next(iter(_STAND_INS)))
        _STAND_INS[key] = sanitized(raw) if holds_more(raw) else None
    return _STAND_INS[key]


def sanitized(raw: bytes) -> bytes:
    """The config `raw` with only what git needs and nothing that can hold a credential;
    empty when git cannot read it (git in the sandbox would refuse it anyway)."""
    entries = _entries(raw)
    if entries is None:
        return b""
    lines: list[str] = []
    header = ""
    for key, value in entries:
        section, subsection, name = _split(key)
        if section not in KEPT_SECTIONS or (section, name) in DROPPED_KEYS:
            continue
        if value is not None:
            value = _without_userinfo(value)  # a remote's url, pushurl, proxy
        wanted = f"[{section}]" if subsection is None else f'[{section} "{_quoted(subsection)}"]'
        if wanted != header:
            lines.append(wanted)
            header = wanted
        lines.append(f"\t{name}" if value is None else f'\t{name} = "{_quoted(value)}"')
    return ("\n".join(lines) + "\n").encode() if lines else b""


def holds_more(raw: bytes) -> bool:
    """Whether `raw` holds anything its stand-in drops (so the sandbox must not see it)."""
    entries = _entries(raw)
    if entries is None:
        return bool(raw.strip())
    return _entries(sanitized(raw)) != entries


def _entries(raw: bytes) -> list[tuple[str, str | None]] | None:
    """(key, value) pairs as git reads them, in order (None: a key with no `=`, true);
    None if git cannot read them."""
    try:
        done = subprocess.run(
            ["git", "config", "--no-includes", "--file", "-", "--null", "--list"],  # noqa: S607
            input=raw,
            capture_output=True,
            timeout=_TIMEOUT,
            check=False,
            env={"GIT_CONFIG_NOSYSTEM": "1", "HOME": "/nonexistent", "PATH": _PATH},
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    if done.returncode != 0:
        return None
    pairs: list[tuple[str, str | None]] = []
    for item in done.stdout.decode("utf-8", "replace").split("\0"):
        if item:
            key, given, value = item.partition("\n")
            pairs.append((key, value if given else None))
    return pairs


def _split(key: str) -> tuple[str, str | None, str]:
    """`remote.origin.url` -> ("remote", "origin", "url"); a subsection may hold dots."""
    section, _, rest = key.partition(".")
    subsection, _, name = rest.rpartition(".")
    return section.lower(), (subsection if _ else None), name.lower()


def _quoted(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\t", "\\t")


def _without_userinfo(url: str) -> str:
    """A URL with no user, password, query or fragment (`https://x:tok@host/r?k=v` ->
    `https://host/r`); a scp-like `user@host:path` or a local path kept as it is, but for
    a password in it (`user:pw@host:path` -> `host:path`)."""
    parts = urlsplit(url)
    if parts.scheme and parts.netloc:
        host = parts.netloc.rpartition("@")[2]
        return urlunsplit((parts.scheme, host, parts.path, "", ""))
    user, at, rest = url.partition("@")
    if at and ":" in user:
        return rest
    return url
