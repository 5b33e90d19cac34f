"""FileOps under traversal payloads: every file.* operation, thousands of names, 0 escapes.

Run: .venv/bin/python benchmarks/file_guard.py
Target (issue 5): 0 escapes (nothing outside the workspace read, written, moved or deleted).
"""

from __future__ import annotations

import asyncio
import json
import tempfile
import time
from pathlib import Path
from typing import Any
from urllib.parse import quote

from core.errors import PolicyDenied, ToolFailed
from core.tools.capability import CapabilityTokens
from core.tools.file_ops import FileOps
from core.tools.workspace import Workspace

MARK = "BAIT-OUTSIDE"
BASES = [
    "..", "../..", "../../..", "../secret", "../../etc/passwd", "a/../../b", "/etc/passwd",
    "/workspace/../secret", "/workspace/a/../../x", "//etc/passwd", "./../x", "a/b/../../../c",
    "../b/secret", "notes/../../secret",
]  # fmt: skip


def variants(payload: str) -> set[str]:
    once = quote(payload, safe="")
    return {
        payload,
        once,
        quote(once, safe=""),
        quote(quote(once, safe=""), safe=""),
        payload.replace(".", "%2e").replace("/", "%2f"),
        payload.replace(".", "%2E").replace("/", "%2F"),
        payload.replace("/", "\\"),
        payload.replace("/", "%5c"),
        payload.replace("..", "%c0%ae%c0%ae"),  # overlong UTF-8 dots
        payload.replace("/", "%c0%af"),  # overlong UTF-8 slash
        payload.replace("..", "\uff0e\uff0e"),  # fullwidth dots
        payload.replace("..", "\u2025"),  # two-dot leader, NFKC ".."
        payload.replace("/", "\uff0f"),  # fullwidth solidus
        payload.replace("/", "/./"),
        payload + "\x00.txt",
        payload + "%00",
    }


def payloads() -> list[str]:
    names = {
        prefix + v + suffix
        for base in BASES
        for v in variants(base)
        for prefix in ("", "notes/", "/workspace/", "./")
        for suffix in ("", "/x", "/../y")
    }
    return sorted(names)


def outside(top: Path, ws: Workspace) -> dict[str, str]:
    return {
        str(p): p.read_text(errors="replace")
        for p in top.rglob("*")
        if p.is_file() and not p.is_relative_to(ws.root)
    }


async def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        top = Path(tmp)
        ws = Workspace(top / "a" / "b" / "c" / "ws")
        (ws.root / "notes").mkdir()
        for bait in ("a/b/c/secret", "a/b/secret", "a/b/etc/passwd", "a/etc/passwd", "a/b/c/x"):
            (top / bait).parent.mkdir(parents=True, exist_ok=True)
            (top / bait).write_text(MARK)
        tokens = CapabilityTokens(b"benchmark")
        ops = FileOps(ws, tokens)
        before = outside(top, ws)
        counts = {"attempts": 0, "refused": 0, "ran_inside": 0, "bait_read": 0}
        started = time.perf_counter()
        for name in payloads():
            for capability, params in _operations(name):
                counts["attempts"] += 1
                action = ops.action(capability, **params)
                try:
                    result = await ops.run(action, tokens.issue(action.digest))
                except (PolicyDenied, ToolFailed):
                    counts["refused"] += 1
                    continue
                counts["ran_inside"] += 1
                counts["bait_read"] += MARK in result.output
        elapsed = time.perf_counter() - started
        changed = sum(1 for k, v in outside(top, ws).items() if before.get(k) != v)
        changed += len(set(before) - set(outside(top, ws)))
        report = {
            **counts,
            "payloads": len(payloads()),
            "outside_files_changed": changed,
            "escapes": counts["bait_read"] + changed,
            "us_per_operation": round(elapsed / counts["attempts"] * 1e6, 1),
        }
        print(json.dumps(report, indent=2))


def _operations(name: str) -> list[tuple[str, dict[str, Any]]]:
    return [
        ("file.read", {"path": name}),
        ("file.list", {"path": name}),
        ("file.write", {"path": name, "content": "ESCAPED"}),
        ("file.delete", {"path": name, "recursive": True}),
        ("file.move", {"source": name, "target": "moved"}),
        ("file.move", {"source": "notes", "target": name}),
    ]


if __name__ == "__main__":
    asyncio.run(main())
