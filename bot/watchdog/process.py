"""The watchdog process: read the heartbeat, judge, tell the owner; until SIGTERM/SIGINT."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal

import aiohttp

from bot.logs import RedactingFormatter
from bot.watchdog.config import WatchdogConfig, watchdog_config
from bot.watchdog.courier import Courier
from bot.watchdog.message import last_log_line, render
from bot.watchdog.targets import GchatTarget, Target, TelegramTarget
from core.clock import Clock, SystemClock
from core.config import Settings
from core.health.heartbeat import FILE, read_heartbeat
from core.health.watch import Notice, Watch
from core.receipts.redaction import Redactor

log = logging.getLogger(__name__)


def redactor_of(config: WatchdogConfig) -> Redactor:
    """A redactor that knows the secrets the watchdog holds (the log line and its own log)."""
    held = [
        config.telegram.token if config.telegram else None,
        config.gchat.webhook_url if config.gchat else None,
    ]
    return Redactor(value.get_secret_value() for value in held if value is not None)


def targets_of(config: WatchdogConfig, session: aiohttp.ClientSession) -> list[Target]:
    """Telegram and Google Chat, as configured."""
    targets: list[Target] = []
    if config.telegram is not None:
        targets.append(TelegramTarget(config.telegram, config.home, session))
    if config.gchat is not None:
        targets.append(GchatTarget(config.gchat, session))
    return targets


async def watch_lancelot(
    config: WatchdogConfig, stop: asyncio.Event, clock: Clock | None = None
) -> None:
    """Read the heartbeat every `config.check_every` seconds until `stop` is set; tell the
    owner once when Lancelot has been silent `config.after` seconds, once when it is back."""
    clock = clock or SystemClock()
    redactor = redactor_of(config)

    def text_for(notice: Notice) -> str:
        return render(notice, last_log_line(config.home, redactor), config.zone)

    async with aiohttp.ClientSession() as session:
        courier = Courier(targets_of(config, session), text_for, monotonic=clock.monotonic)
        watch = Watch(config.after, clock.monotonic())
        while not stop.is_set():
            beat = await asyncio.to_thread(read_heartbeat, config.home)
            notice = watch.observe(beat, clock.monotonic())
            if notice is not None and await courier.deliver(notice):
                watch.delivered(notice)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), config.check_every)


def _log_to_stderr(redactor: Redactor, level: str) -> None:
    """The watchdog logs to stderr only: it writes nothing into Lancelot's home."""
    handler = logging.StreamHandler()
    handler.setFormatter(RedactingFormatter(redactor, "%(asctime)s %(levelname)s %(message)s"))
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(level)
    logging.getLogger("aiohttp").setLevel(logging.WARNING)


def _describe(config: WatchdogConfig) -> str:
    ways = []
    if config.telegram is not None:
        owners = ", ".join(map(str, config.telegram.owner_ids)) or "the paired owner"
        ways.append(f"Telegram ({owners})")
    if config.gchat is not None:
        ways.append("Google Chat")
    return " and ".join(ways)


async def serve_watchdog(config: WatchdogConfig) -> int:
    """Watch until SIGTERM or SIGINT; exit code 0."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(sig, stop.set)
    await watch_lancelot(config, stop)
    return 0


def prepare_watchdog(settings: Settings) -> WatchdogConfig:
    """The watchdog's settings, its logging set up and its start told; ConfigError (one
    line) when it could tell nobody."""
    config = watchdog_config(settings)
    _log_to_stderr(redactor_of(config), settings.log_level)
    if not config.home.is_dir():
        log.warning("LANCELOT_HOME %s does not exist (yet): is it Lancelot's?", config.home)
    log.info(
        "watching %s: the owner is told on %s after %g s without a heartbeat",
        config.home / FILE,
        _describe(config),
        config.after,
    )
    return config
