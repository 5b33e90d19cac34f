"""The workspace guard rejects every way out: thousands of traversal payloads, 0 escapes."""

from __future__ import annotations

import itertools
import os
from pathlib import Path
from urllib.parse import quote

import pytest

from core.errors import PolicyDenied
from core.tools.workspace import Workspace

ESCAPES = [
    "..",
    "../..",
    "../../..",
    "../../../etc/passwd",
    "../secret",
    "a/../../b",
    "/etc/passwd",
    "/workspace/../etc",
    "/workspace/a/../../x",
    "//etc/passwd",
    "/root/.ssh/id_rsa",
    "./../x",
    "a/b/../../../c",
]


def variants(payload: str) -> set[str]:
    once = quote(payload, safe="")
    dot_encoded = payload.replace(".", "%2e").replace("/", "%2f")
    return {
        payload,
        once,
        quote(once, safe=""),
        quote(quote(once, safe=""), safe=""),
        dot_encoded,
        dot_encoded.upper(),
        payload.replace("/", "\\"),
        payload.replace("..", "%c0%ae%c0%ae"),  # overlong UTF-8 dots
        payload.replace("..", "\uff0e\uff0e"),  # fullwidth dots fold to ".."
        payload.replace("/", "/./"),
        payload + "\x00.txt",
    }


def all_payloads() -> list[str]:
    out: set[str] = set()
    for base in ESCAPES:
        for prefix in ("", "notes/", "/workspace/", "./"):
            out |= variants(prefix + base)
    return sorted(out)


def test_thousands_of_traversal_payloads_never_escape(tmp_path: Path) -> None:
    ws = Workspace(tmp_path / "ws")
    (tmp_path / "ws" / "notes").mkdir()
    payloads = all_payloads()
    assert len(payloads) > 400
    escapes = []
    for payload, suffix in itertools.product(payloads, ("", "/x", "/../y")):
        try:
            resolved = ws.resolve(payload + suffix)
        except PolicyDenied:
            continue
        if not resolved.is_relative_to(ws.root):
            escapes.append(payload + suffix)
    assert escapes == []


def test_symlink_swaps_out_of_the_workspace_are_caught(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("s")
    ws = Workspace(tmp_path / "ws")
    os.symlink(outside, tmp_path / "ws" / "link")
    os.symlink(outside / "secret.txt", tmp_path / "ws" / "file-link")
    for name in ("link", "link/secret.txt", "/workspace/file-link", "link/../link/x"):
        with pytest.raises(PolicyDenied):
            ws.resolve(name)


def test_ordinary_paths_and_sensitive_files(tmp_path: Path) -> None:
    ws = Workspace(tmp_path / "ws")
    assert ws.resolve("/workspace/notes/a.txt") == ws.root / "notes" / "a.txt"
    assert ws.resolve("notes/a b.txt") == ws.root / "notes" / "a b.txt"
    assert ws.resolve("/workspace") == ws.root
    assert ws.display(ws.root / "x" / "y") == "/workspace/x/y"
    for sensitive in (
        ".env",
        "app/.env.local",
        ".ssh/config",
        "deploy/id_rsa",
        "certs/site.pem",
        "aws/credentials",
    ):
        with pytest.raises(PolicyDenied, match="sensitive"):
            ws.resolve(sensitive)
