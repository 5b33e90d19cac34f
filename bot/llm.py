"""Wires the model layer into a Lancelot: providers from settings, the router, /usage, health."""

from __future__ import annotations

import asyncio
import importlib.util
import time
from functools import partial
from pathlib import Path

from bot.kernel import Kernel
from core.health.snapshot import LOCAL_MODEL_CHECK
from core.llm.budget import Budget, BudgetCaps
from core.llm.escalation import EscalationPolicy
from core.llm.local import LocalProvider
from core.llm.model_file import packaged_model_available, resolve_model
from core.llm.prices import PriceTable
from core.llm.providers import FlagshipChoice, LazyProvider, choose_flagship
from core.llm.redaction import PiiRedactor
from core.llm.router import Flagship, Router
from core.llm.spend import SpendBook
from core.llm.usage import UsageBook
from core.llm.usage_command import UsageCommand
from core.receipts.redaction import Redactor


def local_provider(app: Kernel) -> LocalProvider | None:
    """The local model, if llama-cpp-python and a GGUF are available (nothing loads yet)."""
    llm = app.settings.llm
    if importlib.util.find_spec("llama_cpp") is None:
        return None
    if llm.local_model is None and not packaged_model_available():
        return None
    return LocalProvider(
        partial(resolve_model, llm.local_model, app.home),
        threads=llm.local_threads,
        context=llm.local_context,
        tasks=app.tasks,
    )


async def wire_models(app: Kernel, redactor: Redactor, chosen: str | None = None) -> Router:
    """Build the router from the settings; register /usage, a health check, a status line.

    The local model loads on its first use, never at startup. `redactor` knows every
    configured secret: nothing the model is sent carries one. `chosen` is the provider the
    owner chose in chat: it wins over LANCELOT_PROVIDER while its key is set.
    """
    llm = app.settings.llm
    book = UsageBook(app.state, writer=app.writer)
    await book.setup()
    choice = choose_flagship(llm, chosen)
    flagship = None
    if choice.config is not None:
        provider = LazyProvider(choice.config)
        flagship = Flagship(provider, choice.config)
        app.stack.push_async_callback(provider.aclose)
    local = local_provider(app) if app.features.enabled("LOCAL_MODEL") else None
    if local is not None:
        app.stack.push_async_callback(local.aclose)
    prices = PriceTable.with_overrides(llm.prices)
    budget = await _budget(app, prices)
    router = Router(
        ledger=app.ledger,
        usage=book,
        prices=prices,
        redactor=PiiRedactor(redactor),
        local=local,
        flagship=flagship,
        escalation=EscalationPolicy(deep_over_chars=llm.deep_over_chars),
        no_flagship_reason=choice.problem,
        budget=budget,
    )
    describe = partial(_describe, router, local)
    UsageCommand(app.commands, book, describe, budget).register()
    app.status_fields["Models"] = describe

    app.health.register("models", partial(_health, choice), optional=True)
    if local is not None:
        # /health's "Local model" line and the scheduler's needs_local_model gate read it.
        check = partial(_local_health, local, llm.local_model)
        app.health.register(LOCAL_MODEL_CHECK, check, optional=True)
    return router


def switch_provider(app: Kernel, router: Router, name: str) -> None:
    """Think with provider `name` from now on (it has a key; the owner chose it in chat)."""
    choice = choose_flagship(app.settings.llm, name)
    config = choice.config
    if config is None or config.name != name or router.flagship_name == name:
        return
    provider = LazyProvider(config)
    app.stack.push_async_callback(provider.aclose)
    router.use_flagship(Flagship(provider, config))


async def _budget(app: Kernel, prices: PriceTable) -> Budget:
    """The spending caps from the settings, over the paid calls kept in state.db; its warning
    card goes to the owner on every channel. Days and months are the owner's timezone."""
    book = SpendBook(app.state, writer=app.writer)
    await book.setup(time.time())
    conf = app.settings.budget
    caps = BudgetCaps(conf.daily_usd, conf.monthly_usd, conf.allow_step_usd, conf.warn_at)
    zone = app.settings.owner_timezone
    return Budget(book, prices, caps, app.ledger, zone=lambda: zone, announce=app.bus.broadcast)


async def _local_health(local: LocalProvider, configured: Path | None) -> str | None:
    """Degraded when the local model failed to load, or its configured file is not there
    (known before the first use tries to load it)."""
    if local.load_error:
        return f"local model: {local.load_error}"
    if configured is not None and not await asyncio.to_thread(configured.is_file):
        return f"local model: LANCELOT_LOCAL_MODEL {configured} is not a file"
    return None


async def _health(choice: FlagshipChoice) -> str | None:
    """Degraded when the named provider has no key."""
    if choice.misconfigured:
        return f"model provider: {choice.problem}"
    return None


def _describe(router: Router, local: LocalProvider | None) -> str:
    """One line for /status and /usage: which models answer."""
    flagship = router.flagship_name or "no flagship (set LANCELOT_PROVIDER and its key)"
    if local is None:
        state = "no local model"
    elif local.loaded:
        state = f"local {local.model_name} loaded"
    elif local.load_error:
        state = "local model failed to load"
    else:
        state = "local model loads on first use"
    return f"{flagship}; {state}"
