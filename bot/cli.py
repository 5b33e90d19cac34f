"""The `lancelot` command: run, chat, setup, pair, doctor, receipts verify/export, replay,
memory export/review, soul lint, sandbox build, container base, watchdog, mcp list/test."""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Coroutine
from pathlib import Path
from typing import Any, TypeVar

import uvloop

from bot.logs import configure_logging
from bot.mcp_cli import add_mcp_commands, run_mcp
from bot.memory_cli import add_memory_commands, run_memory
from bot.pair_cli import add_pair_command, run_pair
from bot.receipts_cli import add_receipts_commands, run_receipts
from bot.replay_cli import add_replay_command, run_replay
from core.config import load_settings, unknown_environment
from core.errors import ConfigError, DeliveryFailed, StorageError

T = TypeVar("T")
EXIT_USAGE = 2


def run_loop(main: Coroutine[Any, Any, T]) -> T:
    """Run `main` to the end on uvloop's event loop (libuv, in C), which a serving process
    spends about a tenth less CPU in than in asyncio's own (benchmarks/telegram.py)."""
    with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
        return runner.run(main)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="lancelot", description="A self-hosted agent.")
    parser.add_argument("--config", type=Path, help="settings file (default config/lancelot.yaml)")
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("run", help="start everything configured")
    commands.add_parser("chat", help="talk to Lancelot in this terminal")
    commands.add_parser("watchdog", help="tell the owner when `lancelot run` stops answering")
    commands.add_parser("setup", help="ask for the model provider keys, check and keep them")
    commands.add_parser("link", help="a one-time receipt-page link from the running Lancelot")
    doctor = commands.add_parser("doctor", help="check the settings, tokens, keys and engine")
    doctor.add_argument("--json", action="store_true", help="one JSON object, for scripts")
    doctor.add_argument("--timeout", type=float, default=5.0, help="seconds per check")
    receipts = commands.add_parser("receipts", help="receipt ledger tools")
    receipts_cmd = receipts.add_subparsers(dest="receipts_command", required=True)
    add_receipts_commands(receipts_cmd)
    add_replay_command(commands)
    add_memory_commands(commands)
    add_pair_command(commands)
    add_mcp_commands(commands)
    soul = commands.add_parser("soul", help="constitution tools")
    soul_cmd = soul.add_subparsers(dest="soul_command", required=True)
    lint = soul_cmd.add_parser("lint", help="check a soul file against the invariants")
    lint.add_argument("file", type=Path)
    sandbox = commands.add_parser("sandbox", help="shell sandbox tools")
    sandbox_cmd = sandbox.add_subparsers(dest="sandbox_command", required=True)
    build = sandbox_cmd.add_parser("build", help="build the sandbox image from Debian packages")
    build.add_argument("--force", action="store_true", help="rebuild even if the image exists")
    build.add_argument("--mirror", help="Debian mirror URL (default: the one apt uses)")
    container = commands.add_parser("container", help="the container image's tools")
    container_cmd = container.add_subparsers(dest="container_command", required=True)
    base = container_cmd.add_parser(
        "base", help="make the Dockerfile's Python base image from Debian packages"
    )
    base.add_argument("--force", action="store_true", help="rebuild even if the image exists")
    base.add_argument("--mirror", help="Debian mirror URL (default: the one apt uses)")
    return parser


def _lint_soul(path: Path) -> int:
    from soul import lint_file

    report = lint_file(path)
    print(report.render())
    return 0 if report.ok else 1


def _fail(message: str) -> int:
    print(f"lancelot: {message}", file=sys.stderr)
    return EXIT_USAGE


def main(argv: list[str] | None = None) -> int:
    """Entry point; returns the process exit code."""
    args = _parser().parse_args(argv)
    if args.command == "soul":
        return _lint_soul(args.file)
    if args.command == "doctor":  # a broken settings file is one of the things it reports
        from bot.channels.registry import CHANNELS
        from bot.doctor.runner import run_doctor

        return run_doctor(
            args.config, channels=list(CHANNELS), as_json=args.json, timeout=args.timeout
        )
    try:
        settings = load_settings(args.config)
    except ConfigError as exc:
        return _fail(f"config error: {exc}")
    for warning in unknown_environment():
        print(f"lancelot: warning: {warning}", file=sys.stderr)
    quiet = args.command == "chat" or (args.command == "run" and sys.stdin.isatty())
    if args.command in ("run", "chat", "mcp"):
        from bot.app import redactor_for  # the whole app: only for the commands that run it

        configure_logging(
            settings.home,
            settings.log_level,
            redactor_for(settings),
            quiet=quiet or args.command == "mcp",
        )
    try:
        if args.command == "receipts":
            return run_receipts(settings, args)
        if args.command == "replay":
            return run_replay(settings, args)
        if args.command == "memory":
            return run_memory(settings, args)
        if args.command == "pair":
            return run_pair(settings, args)
        if args.command == "mcp":
            from bot.app import redactor_for

            return run_loop(run_mcp(settings, args, redactor_for(settings)))
        if args.command == "link":
            from bot.control import print_link

            return print_link(settings)
        if args.command == "setup":
            from bot.setup_cli import run_setup

            return run_setup(settings)
        if args.command == "sandbox":
            from bot.sandbox import build_image

            return build_image(settings, force=args.force, mirror=args.mirror)
        if args.command == "watchdog":
            from bot.watchdog.process import prepare_watchdog, serve_watchdog

            return run_loop(serve_watchdog(prepare_watchdog(settings)))
        if args.command == "container":
            from bot.container import build_base

            return build_base(force=args.force, mirror=args.mirror or settings.sandbox.mirror)
        from bot.runner import serve

        return run_loop(serve(settings, mode=args.command, config=args.config))
    except (StorageError, ConfigError, DeliveryFailed) as exc:  # one line, no traceback
        return _fail(str(exc))
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
