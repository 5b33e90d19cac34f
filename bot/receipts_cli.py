"""`lancelot receipts verify` and `lancelot receipts export`: read the ledger, never create it.

verify exits 0 when the chain and every checkpoint hold, 1 when they do not (or the file
cannot be read), 2 when there is nothing to verify (no data directory, no ledger, a bad
fingerprint). It names the file it checked and the last checkpoint it matched.
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any, TextIO

from bot.ledger import LEDGER_FILE
from core.config import Settings
from core.errors import StorageError
from core.receipts.base import Checkpoint, VerifyReport
from core.receipts.evidence import Evidence
from core.receipts.export import stored_rows
from core.receipts.fingerprints import Fingerprint, KeyFingerprint, parse_against
from core.receipts.incremental import MARK_FILE, verify_since_mark, write_mark
from core.receipts.schema import COLUMNS
from core.receipts.verify import verify_ledger

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2
FIELDS = tuple(name.strip() for name in COLUMNS.split(","))


def add_receipts_commands(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """The verify and export subcommands."""
    verify = commands.add_parser(
        "verify", help="check the hash chain against every signed checkpoint"
    )
    verify.add_argument("--json", action="store_true", help="one JSON object, for scripts")
    verify.add_argument(
        "--against",
        metavar="SEQ:HEX|key:HEX",
        help="also check a fingerprint copied from elsewhere (a digest card in the chat):"
        " the ledger's at a checkpoint, or the public key's",
    )
    verify.add_argument(
        "--incremental",
        action="store_true",
        help="check only what came after the last checkpoint a verify passed (kept in"
        " verified.json); the first time, verify in full",
    )
    export = commands.add_parser("export", help="receipts as JSON lines, with their hashes")
    export.add_argument("--from", dest="first", type=int, metavar="SEQ", help="from receipt #SEQ")
    export.add_argument("--to", dest="last", type=int, metavar="SEQ", help="up to receipt #SEQ")
    export.add_argument("--type", dest="action_type", help="only this action type")
    export.add_argument("--out", type=Path, help="a file to write (default: standard output)")


def run_receipts(settings: Settings, args: argparse.Namespace) -> int:
    """Run `lancelot receipts <verify|export>`; the exit code."""
    if args.receipts_command == "export":
        return export(settings, args)
    if args.incremental and args.against is not None:
        return usage_error("--incremental and --against do not go together", args.json)
    return verify(settings, as_json=args.json, against=args.against, incremental=args.incremental)


def ledger_path(settings: Settings) -> Path:
    """The ledger file of the configured home; StorageError when either is missing."""
    home = settings.home.expanduser().resolve()
    if not home.is_dir():
        raise StorageError(
            f"LANCELOT_HOME {home}: no such directory; nothing to read (is LANCELOT_HOME right?)"
        )
    path = home / LEDGER_FILE
    if not path.is_file():
        raise StorageError(f"{path}: no receipt ledger here (is LANCELOT_HOME right?)")
    return path


def verify(
    settings: Settings,
    *,
    as_json: bool = False,
    against: str | None = None,
    incremental: bool = False,
) -> int:
    """Verify the home's ledger and print the outcome. A pass keeps the newest checkpoint
    matched as the mark an incremental verify starts from."""
    since: Checkpoint | None = None
    try:
        fingerprint = parse_against(against) if against is not None else None
        path = ledger_path(settings)
        evidence = Evidence.of_home(path.parent, settings.ledger.checkpoint_every_receipts)
        if incremental:
            report, since = verify_since_mark(path, evidence)
        else:
            report = verify_ledger(path, evidence, fingerprint)
            _keep_mark(path, report)
    except (ValueError, StorageError) as exc:  # nothing it can check
        return usage_error(str(exc), as_json)
    if as_json:
        print(json.dumps(_as_json(report, fingerprint, since, incremental), indent=2))
    elif report.ok:
        _print_since(since, incremental)
        _print_ok(report, fingerprint)
    elif not report.readable:
        print(f"lancelot: {report.file}: {report.reason}", file=sys.stderr)
    else:
        _print_failed(report)
    return EXIT_OK if report.ok else EXIT_FAILED


def _keep_mark(path: Path, report: VerifyReport) -> None:
    """After a full verify passed: its newest checkpoint is where an incremental one starts."""
    if report.ok and report.last_checkpoint is not None:
        try:
            write_mark(path.parent / MARK_FILE, report.last_checkpoint)
        except OSError as exc:  # a read-only home can still be verified
            print(f"lancelot: cannot keep the verified mark: {exc}", file=sys.stderr)


def _print_since(since: Checkpoint | None, incremental: bool) -> None:
    if since is not None:
        print(f"incremental: from checkpoint {since.fingerprint}, verified before")
    elif incremental:
        print("incremental: no earlier verify to start from; verified in full")


def _print_ok(report: VerifyReport, fingerprint: Fingerprint | KeyFingerprint | None) -> None:
    print(f"ok: {report.checked:,} receipts in {report.file}, hash chain intact")
    last = report.last_checkpoint
    if last is None:
        print("checkpoints: none (this ledger was never signed, so a cut tail would not show)")
    else:
        print(
            f"checkpoints: {report.checkpoints:,} matched; the last {last.fingerprint},"
            f" signed {last.time}"
        )
    print(f"head: {report.head}")
    if report.key is not None:
        print(f"key: {report.key}")
    if fingerprint is not None:
        print(f"fingerprint {fingerprint}: matches")


def _print_failed(report: VerifyReport) -> None:
    where = f" at receipt #{report.first_bad_seq}" if report.first_bad_seq is not None else ""
    print(f"TAMPERED{where} in {report.file}: {report.reason}")
    last = report.last_checkpoint
    matched = f"{last.fingerprint}, signed {last.time}" if last else "none"
    print(f"checked {report.checked:,} receipts; last checkpoint matched: {matched}")


def _as_json(
    report: VerifyReport,
    fingerprint: Fingerprint | KeyFingerprint | None,
    since: Checkpoint | None = None,
    incremental: bool = False,
) -> dict[str, Any]:
    last = report.last_checkpoint
    return {
        "incremental": incremental,
        "since": None if since is None else _checkpoint_json(since),
        "ok": report.ok,
        "file": report.file,
        "readable": report.readable,
        "checked": report.checked,
        "first_bad_seq": report.first_bad_seq,
        "reason": report.reason,
        "checkpoints": report.checkpoints,
        "last_checkpoint": None if last is None else _checkpoint_json(last),
        "head": report.head,
        "key": report.key,
        "against": str(fingerprint) if fingerprint is not None else None,
    }


def _checkpoint_json(checkpoint: Checkpoint) -> dict[str, Any]:
    c = checkpoint
    return {"seq": c.seq, "head": c.head, "time": c.time, "fingerprint": c.fingerprint}


def usage_error(message: str, as_json: bool) -> int:
    """Say why there is nothing to check (one JSON object under --json); EXIT_USAGE."""
    if as_json:
        print(json.dumps({"ok": False, "error": message}, indent=2))
    else:
        print(f"lancelot: {message}", file=sys.stderr)
    return EXIT_USAGE


def export(settings: Settings, args: argparse.Namespace) -> int:
    """Write receipts (a range, a type) as JSON lines: every stored field and both hashes."""
    try:
        path = ledger_path(settings)
    except StorageError as exc:
        return usage_error(str(exc), as_json=False)
    rows = stored_rows(path, args.first or 1, args.last, args.action_type)
    try:
        if args.out is None:
            count = _write_rows(rows, sys.stdout)
        else:
            with args.out.open("w", encoding="utf-8") as out:
                count = _write_rows(rows, out)
    except (sqlite3.Error, OSError) as exc:
        print(f"lancelot: {path}: cannot export: {exc}", file=sys.stderr)
        return EXIT_FAILED
    print(f"exported {count:,} receipts from {path}", file=sys.stderr)
    return EXIT_OK


def _write_rows(rows: Iterable[tuple[object, ...]], out: TextIO) -> int:
    count = 0
    for row in rows:
        out.write(json.dumps(dict(zip(FIELDS, row, strict=True)), separators=(",", ":")) + "\n")
        count += 1
    return count
