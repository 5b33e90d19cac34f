"""Runs an assembled Lancelot until a signal (or, for chat, the end of input)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import sys
from functools import partial
from pathlib import Path
from typing import TextIO

from bot.app import Lancelot, assemble
from bot.channels.registry import CHANNELS, ChannelRegistry
from bot.channels.spec import ChannelWiring, end_of_input
from bot.control import ControlSocket
from bot.pairing import OwnerBook
from core.channel import Channel
from core.config import Settings
from core.config.loader import DEFAULT_CONFIG
from core.errors import ConfigError
from core.features import AT_START, FeatureError, FeatureFlags, owner_switches
from core.health.heartbeat import HeartbeatWriter
from core.receipts.model import Receipt
from core.runtime.heap import freeze_startup_heap
from core.security.pairing import PairingLimits

log = logging.getLogger(__name__)


def _install_signals(stop: asyncio.Event, features: FeatureFlags) -> None:
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(sig, stop.set)

    def reload_features() -> None:
        try:
            changed = features.reload()
        except FeatureError as exc:  # a typo in a file must not stop a running Lancelot
            log.error("switches not reloaded, the old ones stay: %s", exc)
            return
        shown = ", ".join(f"{k.lower()}={'on' if v else 'off'}" for k, v in changed.items())
        later = sorted(k.lower() for k in changed if k in AT_START)
        note = f" ({', '.join(later)}: at the next start)" if later else ""
        log.info("switches reloaded: %s%s", shown or "no change", note)

    with contextlib.suppress(NotImplementedError, RuntimeError, AttributeError):
        loop.add_signal_handler(signal.SIGHUP, reload_features)


def owner_book(
    app: Lancelot, out: TextIO | None = None, limits: PairingLimits | None = None
) -> OwnerBook:
    """Who owns each channel, shown in /status; an owner who pairs is greeted, then
    onboarding begins in that chat (`out`: where pairing codes are printed, stdout;
    `limits`: the code's lifetime and the tries allowed)."""
    owners = OwnerBook(app.settings, app.home, out=out, limits=limits, channels=list(app.channels))
    app.status_fields["Owner"] = partial(owners.describe, app.owner)
    owners.on_new_owner.append(
        lambda new: app.onboarding.welcome(new.channel, new.chat_id, new.name)
    )
    return owners


def _wirings(settings: Settings, channels: ChannelRegistry) -> list[ChannelWiring]:
    """The channels the settings configure (each loads its SDK only here)."""
    return [spec.wiring(settings) for spec in channels if spec.configured(settings)]


def _switches(settings: Settings, config: Path | None) -> FeatureFlags:
    """The FEATURE_* switches from the settings file, the environment and the home's
    features.env, in that order; SIGHUP reads all three again."""
    path = config or Path(os.environ.get("LANCELOT_CONFIG") or DEFAULT_CONFIG)
    return owner_switches(settings.home, path)


def no_channel_warning(channels: ChannelRegistry) -> str:
    """What to set to turn a channel on, for each registered channel, when none is."""
    hints = "; ".join(f"{spec.label}: {spec.setup_hint}" for spec in channels if spec.setup_hint)
    return (
        "no channel configured and no terminal attached: serving the web app only; "
        f"to talk to Lancelot, {hints or 'register a channel'}; or run `lancelot chat`"
    )


async def _attach_channels(
    app: Lancelot, wirings: list[ChannelWiring], *, chat: bool, receiving: bool
) -> Channel | None:
    """Start the configured channels, then the terminal's when it is wanted (`chat`, or
    `run` with a terminal and no other channel that receives); returns the terminal's."""
    owners = owner_book(app)
    for wiring in wirings:
        await wiring.attach(app, owners)
    terminal = app.channels.terminal
    if terminal is None or not (chat or (not receiving and sys.stdin.isatty())):
        return None
    return await terminal.wiring(app.settings).attach(app, owners)


async def _until_stopped(app: Lancelot, stop: asyncio.Event, console: Channel | None) -> None:
    """Wait for `stop`, or the end of the console's input (then let the replies to what was
    typed go out first)."""
    ended = end_of_input(console)
    waiters = [asyncio.create_task(stop.wait())]
    if ended is not None:
        waiters.append(asyncio.create_task(ended.wait()))
    await asyncio.wait(waiters, return_when=asyncio.FIRST_COMPLETED)
    for waiter in waiters:
        waiter.cancel()
    if ended is not None and ended.is_set():
        await app.drain()


async def issue_link(app: Lancelot) -> str:
    """A one-time receipt-page link for `lancelot link`, recorded as `/receipts` is."""
    if app.web_port is None:
        raise ConfigError("this Lancelot serves no web page")
    token = await app.viewer.issue_link()
    base = app.settings.web.public_url or app.web_url
    app.ledger.append(
        Receipt(
            action_type="command",
            action_name="link",
            inputs={"via": "lancelot link"},
            outputs={"title": "Receipts link"},
            metadata={"channel": "terminal"},
        )
    )
    return f"{base.rstrip('/')}/receipts?t={token}"


async def serve(
    settings: Settings,
    *,
    mode: str,
    config: Path | None = None,
    channels: ChannelRegistry = CHANNELS,
    stop: asyncio.Event | None = None,
) -> int:
    """`run`: every configured channel. `chat`: the console conversation until end of input.
    `config` is the settings file the switches are read from again on SIGHUP; `stop`, set
    by SIGTERM or SIGINT, may also be set by the caller (an embedding program, a test)."""
    features = _switches(settings, config)
    stop = stop or asyncio.Event()
    _install_signals(stop, features)
    chat = mode == "chat"
    wirings = [] if chat else _wirings(settings, channels)
    receiving = any(wiring.receives for wiring in wirings)
    routes = [route for wiring in wirings for route in wiring.routes()]
    async with assemble(settings, features=features, routes=routes, channels=channels) as app:
        console = await _attach_channels(app, wirings, chat=chat, receiving=receiving)
        if not chat:  # what `lancelot watchdog` reads; its last beat says a clean stop
            every = settings.watchdog.heartbeat_seconds
            await app.stack.enter_async_context(HeartbeatWriter(app.home, every, app.tasks))
        await app.stack.enter_async_context(ControlSocket(app.home, lambda: issue_link(app)))
        app.health.mark_ready()
        freeze_startup_heap()
        if app.web_port is not None:
            log.info("Lancelot ready; web app on %s", app.web_url)
        if not chat and console is None and not receiving:
            log.warning(no_channel_warning(channels))
        await _until_stopped(app, stop, console)
    return 0
