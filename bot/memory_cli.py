"""`lancelot memory export` and `lancelot memory review`: the memory, read from the terminal.

A missing memory.db is an error (nothing is created); they only read, so a running Lancelot
is not disturbed (WAL lets readers in beside it).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path
from typing import cast

from core.config import Settings
from core.errors import StorageError
from core.memory import Memory, MemoryStore
from core.receipts.base import ReceiptStore


def add_memory_commands(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add `memory export` and `memory review` to the CLI."""
    memory = commands.add_parser("memory", help="what Lancelot remembers")
    memory_cmd = memory.add_subparsers(dest="memory_command", required=True)
    export = memory_cmd.add_parser("export", help="write the whole memory as JSON lines")
    export.add_argument("file", type=Path, nargs="?", help="output file (default: stdout)")
    review = memory_cmd.add_parser("review", help="list recent memory commits")
    review.add_argument("--limit", type=int, default=20)


def run_memory(settings: Settings, args: argparse.Namespace) -> int:
    """Run one memory subcommand; its exit code."""
    path = settings.home / "memory.db"
    if not path.exists():
        raise StorageError(f"{path}: no memory database here (check LANCELOT_HOME)")
    return asyncio.run(_run(path, args))


async def _run(path: Path, args: argparse.Namespace) -> int:
    async with MemoryStore(path) as store:
        memory = Memory(store, cast(ReceiptStore, _NoReceipts()))
        if args.memory_command == "export":
            out = args.file or Path("/dev/stdout")
            lines = await memory.export_jsonl(out)
            if args.file is not None:
                print(f"wrote {lines} line(s) to {args.file}", file=sys.stderr)
            return 0
        for row in await memory.review(args.limit):
            print(row.line())
        return 0


class _NoReceipts:
    """Reading from the terminal commits nothing, so it writes no receipt."""

    def append(self, receipt: object) -> None:
        raise StorageError("the memory tools in the terminal only read")
