"""`lancelot replay`: a past request's decisions decided again from their receipts, or what a
proposed Soul would have changed over the last days (`--soul FILE --days N`).

No model is called and no tool runs. Exit 0 when every decision comes out the same, 1 on a
mismatch (the first differing step is named), 2 when there is nothing to replay (no ledger,
an unknown request, one whose decisions cannot be replayed, a Soul file that does not lint).
"""

from __future__ import annotations

import argparse
import json
import sqlite3
from pathlib import Path
from typing import Any

from bot.governance import soul_store
from bot.receipts_cli import EXIT_FAILED, EXIT_OK, EXIT_USAGE, ledger_path, usage_error
from core.config import Settings
from core.errors import StorageError
from core.governance.replay import ReplayReport, SoulSource, one_soul, recorded_souls, replay
from core.governance.whatif import WhatIf, what_if_recorded
from core.receipts.history import receipt_exists, stored_of_kind
from core.receipts.registry import GovernanceReceipt
from soul import Soul, lint_file

DECISIONS = str(GovernanceReceipt.POLICY_DECISION)


def add_replay_command(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """The replay command."""
    parser = commands.add_parser(
        "replay", help="decide a past request again from its receipts; or what-if a Soul"
    )
    parser.add_argument("request", nargs="?", help="the id of the request's first receipt")
    parser.add_argument("--soul", type=Path, metavar="FILE", help="decide under this Soul file")
    parser.add_argument(
        "--days", type=int, metavar="N", help="with --soul: every decision of the last N days"
    )
    parser.add_argument("--json", action="store_true", help="one JSON object, for scripts")


def run_replay(settings: Settings, args: argparse.Namespace) -> int:
    """Run `lancelot replay`; the exit code."""
    try:
        if (args.request is None) == (args.days is None):
            raise ValueError("give a request id, or --soul FILE --days N (not both)")
        path = ledger_path(settings)
        proposed = _soul_file(args.soul) if args.soul is not None else None
        if args.request is None:
            if proposed is None or args.days < 1:
                raise ValueError("--days needs --soul FILE and a number of days of 1 or more")
            return _what_if(path, proposed, args.days, args.json)
        souls = one_soul(proposed) if proposed is not None else _souls_of(settings)
        return _replay(path, args.request, souls, args.json)
    except (ValueError, StorageError, sqlite3.Error) as exc:
        return usage_error(str(exc), args.json)


def _soul_file(path: Path) -> Soul:
    """The Soul in `path`, linted; ValueError naming the first problem."""
    if not path.is_file():
        raise ValueError(f"{path}: no such Soul file")
    report = lint_file(path)
    if report.soul is None or not report.ok:
        first = report.critical[0].describe() if report.critical else "it does not lint"
        raise ValueError(f"{path}: not a Soul Lancelot would run under: {first}")
    return report.soul


def _souls_of(settings: Settings) -> SoulSource:
    """The Soul versions of the configured home, checked against what decided."""
    return recorded_souls(soul_store(settings.home.expanduser()))


def _replay(path: Path, request: str, souls: SoulSource, as_json: bool) -> int:
    if not receipt_exists(path, request):
        raise ValueError(f"no receipt {request} in {path}")
    report = replay(stored_of_kind(path, DECISIONS, quest_id=request), souls)
    if as_json:
        print(json.dumps(_report_json(request, report), indent=2))
    else:
        _print_report(request, report)
    if not report.ok:
        return EXIT_FAILED
    return EXIT_OK if report.steps else EXIT_USAGE


def _print_report(request: str, report: ReplayReport) -> None:
    for step in report.steps:
        mark = "same" if step.matches else "DIFFERS"
        was = step.decision.recorded
        print(f"{step.number}. {was.get('verdict')} {was.get('tier')} {mark}: {step.explain()}")
    for skipped in report.not_replayable:
        print(f"not replayable: {skipped.command or skipped.receipt_id}: {skipped.reason}")
    mismatch = report.first_mismatch
    if mismatch is not None:
        print(f"MISMATCH at {mismatch.explain()}")
    elif report.steps:
        print(f"ok: {len(report.steps)} decisions of request {request} decided the same again")
    else:
        print(f"request {request}: no decision could be replayed")


def _report_json(request: str, report: ReplayReport) -> dict[str, Any]:
    mismatch = report.first_mismatch
    return {
        "ok": report.ok,
        "request": request,
        "first_mismatch": None if mismatch is None else mismatch.number,
        "steps": [
            {
                "step": step.number,
                "receipt_id": step.decision.receipt_id,
                "command": step.decision.command,
                "recorded": dict(step.decision.recorded),
                "recomputed": dict(step.recomputed),
                "differences": list(step.differences),
            }
            for step in report.steps
        ],
        "not_replayable": [
            {"receipt_id": s.receipt_id, "command": s.command, "reason": s.reason}
            for s in report.not_replayable
        ],
    }


def _what_if(path: Path, proposed: Soul, days: int, as_json: bool) -> int:
    found = what_if_recorded(path, proposed, days)
    if as_json:
        print(json.dumps(_what_if_json(found), indent=2))
        return EXIT_OK
    print(found.sentence())
    print(f"decided again: {found.decisions:,}; not replayable: {found.not_replayable:,}")
    for title, tally in found.sorts():
        print(f"{title}: {tally.count:,}")
        for change in tally.examples:
            print(f"  {change.describe()}")
    return EXIT_OK


def _what_if_json(found: WhatIf) -> dict[str, Any]:
    return {
        "days": found.days,
        "decisions": found.decisions,
        "not_replayable": found.not_replayable,
        "sentence": found.sentence(),
        **{
            title.replace(" ", "_"): {
                "count": tally.count,
                "examples": [c.describe() for c in tally.examples],
            }
            for title, tally in found.sorts()
        },
    }
