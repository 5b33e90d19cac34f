"""Wires onboarding in chat into a Lancelot: its store, the live key checks, the router's
provider, the name in memory, the channels step, and /start."""

from __future__ import annotations

from functools import partial

from bot.channels.registry import ChannelRegistry
from bot.kernel import Kernel
from bot.llm import switch_provider
from core.commands.registry import CommandHandler
from core.llm.key_check import KeyCheck, check_key
from core.llm.providers import keyed_providers
from core.llm.router import Router
from core.memory import Memory
from core.memory.blocks import Block
from core.memory.model import Provenance
from core.onboarding import ChannelNote, Onboarding, OnboardingStore, Seams

KEY_CHECK_SECONDS = 10.0
NAME_LINE = "Call the owner "


async def saved_onboarding(app: Kernel) -> OnboardingStore:
    """The onboarding store, its table current (read before the router is built: the owner's
    provider choice wins over LANCELOT_PROVIDER)."""
    store = OnboardingStore(app.state)
    await store.setup()
    return store


async def wire_onboarding(
    app: Kernel,
    store: OnboardingStore,
    router: Router,
    memory: Memory | None,
    channels: ChannelRegistry,
    greeting: CommandHandler,
) -> Onboarding:
    """The onboarding conversation, its router included in the kernel's commands (/start,
    which answers with `greeting` once the owner is set up; the plain messages while it
    runs; its buttons); its channels step shows `channels`."""
    seams = Seams(
        keyed=lambda: keyed_providers(app.settings.llm),
        check_key=partial(_check, app),
        use_provider=partial(switch_provider, app, router),
        provider=lambda: router.flagship_name,
        remember_name=partial(_remember_name, memory),
        default_timezone=app.settings.owner_timezone,
        channels=partial(_channels, app, channels),
        has_local=router.has_local,
    )
    onboarding = Onboarding(store, seams, app.bus, app.tokens, app.ledger)
    await onboarding.setup()
    app.commands.include(onboarding.router(greeting))
    app.status_fields["Onboarding"] = onboarding.label
    # Cards call the owner by the name given here, in the timezone chosen here.
    app.owner.follow(
        zone=lambda: onboarding.progress.timezone, name=lambda: onboarding.progress.name
    )
    if router.budget is not None:  # budget days follow the timezone chosen here
        router.budget.prefer_zone(lambda: onboarding.progress.timezone)
    return onboarding


async def _check(app: Kernel, provider: str) -> KeyCheck:
    return await check_key(app.settings.llm, provider, KEY_CHECK_SECONDS)


async def _remember_name(memory: Memory | None, name: str) -> None:
    """The name in the core block about the owner, which the agent always sees (its other
    lines kept)."""
    if memory is None:
        return
    current = (await memory.blocks()).get(Block.HUMAN)
    lines = [ln for ln in (current.text if current else "").splitlines() if ln.strip()]
    kept = [ln for ln in lines if not ln.startswith(NAME_LINE)]
    text = "\n".join([f"{NAME_LINE}{name}.", *kept])
    await memory.set_block(Block.HUMAN, text, provenance=Provenance.SYSTEM)


def _channels(app: Kernel, channels: ChannelRegistry, current: str) -> tuple[ChannelNote, ...]:
    """The channels one can turn on (those with a setup hint) besides the one in use:
    attached, or what to set."""
    attached = {channel.name for channel in app.bus.channels}
    return tuple(
        ChannelNote(spec.name, spec.label, spec.name in attached, spec.setup_hint)
        for spec in channels
        if spec.setup_hint and spec.name != current
    )
