"""The model router: picks a lane, redacts what leaves the machine, escalates, keeps receipts."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable
from dataclasses import dataclass, replace

from core.errors import ProviderUnavailable
from core.llm.budget import Budget, BudgetReached
from core.llm.decision import RouterDecision
from core.llm.escalation import EscalationPolicy
from core.llm.flagship import FlagshipConfig
from core.llm.local import LocalProvider
from core.llm.prices import PriceTable
from core.llm.providers import no_provider_answer
from core.llm.redaction import PiiRedactor
from core.llm.types import Completion, CompletionRequest, ContextNote, Lane, Provider, Usage
from core.llm.usage import UsageBook
from core.receipts.base import ReceiptStore

log = logging.getLogger(__name__)

LOCAL_LANES = (Lane.LOCAL_REDACTION, Lane.LOCAL_UTILITY)
REFERENCE_MODEL = ("openai", "gpt-4o-mini")  # prices local savings when no flagship is set
_MASKS = ("[REDACTED]", "[EMAIL]", "[PHONE]", "[CARD]", "[IBAN]")
NO_LOCAL_MODEL = "No local model is set up (install the local extra or set LANCELOT_LOCAL_MODEL)."


@dataclass(frozen=True, slots=True)
class Flagship:
    """The configured flagship provider and its lane models."""

    provider: Provider
    config: FlagshipConfig


class Router:
    """Implements core.llm.types.ModelRouter over a local provider and one flagship."""

    def __init__(
        self,
        *,
        ledger: ReceiptStore,
        usage: UsageBook,
        prices: PriceTable,
        redactor: PiiRedactor,
        local: Provider | None = None,
        flagship: Flagship | None = None,
        escalation: EscalationPolicy | None = None,
        no_flagship_reason: str | None = None,
        budget: Budget | None = None,
    ) -> None:
        self._ledger = ledger
        self._usage = usage
        self._prices = prices
        self._redactor = redactor
        self._local = local
        self._flagship = flagship
        self._escalation = escalation or EscalationPolicy()
        self.no_flagship_reason = no_flagship_reason
        self._budget = budget  # paid calls are counted, and refused once a budget is used up

    def has_flagship(self) -> bool:
        """Whether a flagship provider (OpenAI, Anthropic or Gemini) is configured."""
        return self._flagship is not None

    def has_local(self) -> bool:
        """Whether the local lanes have a model (it may still be loading on first use)."""
        return self._local is not None

    def local_ready(self) -> bool:
        """Whether the local model answers now, without loading first."""
        local = self._local
        return local is not None and (not isinstance(local, LocalProvider) or local.loaded)

    def warm_local(self) -> None:
        """Start loading the local model in the background (once)."""
        local = self._local
        if isinstance(local, LocalProvider):
            local.warm()

    def use_flagship(self, flagship: Flagship) -> None:
        """Think with this flagship from now on (the owner chose it during onboarding)."""
        self._flagship = flagship
        self.no_flagship_reason = None

    @property
    def budget(self) -> Budget | None:
        """The spending budget paid calls are counted against, if one is wired."""
        return self._budget

    @property
    def flagship_name(self) -> str | None:
        """ "openai", "anthropic", "gemini", or None."""
        return self._flagship.config.name if self._flagship else None

    async def complete(
        self,
        request: CompletionRequest,
        *,
        task_type: str,
        lane: Lane = Lane.FLAGSHIP_FAST,
        parent_id: str | None = None,
        quest_id: str | None = None,
    ) -> Completion:
        """Answer `request` on `lane` (or the deep lane it escalates to); receipts every try.

        LOCAL_REDACTION answers with the request's last message, masked (deterministic).
        Raises ProviderUnavailable (its user_message is owner-safe) when nothing can answer.
        """
        trace = _Trace(task_type, parent_id, quest_id, request.context)
        if lane is Lane.LOCAL_REDACTION:
            return await self._redaction(request, trace)
        if lane is Lane.LOCAL_UTILITY:
            if self._local is None:
                error = ProviderUnavailable("no local model", user_message=NO_LOCAL_MODEL)
                return await self._refuse(trace, lane, "local", error)
            local = self._local
            return await self._run(trace, lane, "local", "", "local task", local.complete(request))
        if self._flagship is None:
            reason = self.no_flagship_reason or "no flagship configured"
            error = ProviderUnavailable(
                reason, user_message=no_provider_answer(reason, self.has_local())
            )
            return await self._refuse(trace, lane, "none", error)
        return await self._call_flagship(self._flagship, request, lane, trace)

    async def _call_flagship(
        self, flagship: Flagship, request: CompletionRequest, lane: Lane, trace: _Trace
    ) -> Completion:
        if self._budget is not None:
            try:
                await self._budget.check()
            except BudgetReached as exc:
                return await self._refuse(trace, lane, flagship.config.name, exc, "over budget")
        rationale = f"{lane.value} requested"
        if lane is Lane.FLAGSHIP_FAST and (why := self._escalation.reason(request)):
            lane, rationale = Lane.FLAGSHIP_DEEP, f"escalated to deep: {why}"
        masked = self._redactor.request(request)
        redactions = _mask_count(masked) - _mask_count(request)
        name, config = flagship.config.name, flagship.config
        try:
            model = masked.model or config.model_for(lane)
            call = flagship.provider.complete(replace(masked, model=model))
            return await self._run(trace, lane, name, model, rationale, call, redactions)
        except ProviderUnavailable as exc:
            if lane is not Lane.FLAGSHIP_FAST:
                raise
            log.info("fast lane failed (%s); escalating to deep", exc)
        deep = config.model_for(Lane.FLAGSHIP_DEEP)
        call = flagship.provider.complete(replace(masked, model=deep))
        why = "escalated to deep: the fast call failed"
        return await self._run(trace, Lane.FLAGSHIP_DEEP, name, deep, why, call, redactions)

    async def _redaction(self, request: CompletionRequest, trace: _Trace) -> Completion:
        last = request.messages[-1].content if request.messages else ""
        text = self._redactor.text(last)
        count = sum(text.count(m) for m in _MASKS) - sum(last.count(m) for m in _MASKS)
        answer = Completion(text=text, model="redactor", provider="local", finish_reason="stop")
        return await self._run(
            trace,
            Lane.LOCAL_REDACTION,
            "local",
            "redactor",
            "deterministic redaction",
            _ready(answer),
            count,
        )

    async def _run(
        self,
        trace: _Trace,
        lane: Lane,
        provider: str,
        model: str,
        rationale: str,
        call: Awaitable[Completion],
        redactions: int = 0,
    ) -> Completion:
        """Await the call; record its RouterDecision, tokens, cost (or local savings)."""
        started = time.perf_counter()
        try:
            completion = await call
        except ProviderUnavailable as exc:
            elapsed = (time.perf_counter() - started) * 1000
            failed = RouterDecision(
                trace.task_type,
                lane,
                provider,
                model,
                rationale,
                elapsed,
                False,
                error=str(exc),
                redactions=redactions,
            )
            await self._record(failed, trace)
            raise
        elapsed = (time.perf_counter() - started) * 1000
        used = completion.model or model
        decision = RouterDecision(
            trace.task_type,
            lane,
            provider,
            used,
            rationale,
            elapsed,
            True,
            usage=completion.usage,
            cost_usd=self._prices.cost(provider, used, completion.usage),
            redactions=redactions,
        )
        saved = self._flagship_cost(completion.usage) if provider == "local" else 0.0
        await self._record(decision, trace, saved)
        return completion

    async def _refuse(
        self,
        trace: _Trace,
        lane: Lane,
        provider: str,
        error: ProviderUnavailable,
        why: str = "not configured",
    ) -> Completion:
        """Record that nothing could serve the lane, then raise `error`."""
        decision = RouterDecision(
            trace.task_type, lane, provider, "", why, 0.0, False, error=str(error)
        )
        await self._record(decision, trace)
        raise error

    def _flagship_cost(self, usage: Usage) -> float:
        """What these tokens would have cost on the flagship's fast model."""
        if self._flagship is not None:
            config = self._flagship.config
            return self._prices.cost(config.name, config.fast_model, usage)
        return self._prices.cost(*REFERENCE_MODEL, usage)

    async def _record(self, decision: RouterDecision, trace: _Trace, saved: float = 0.0) -> None:
        self._ledger.append(decision.receipt(trace.parent_id, trace.quest_id, trace.context))
        books = [
            self._usage.record(
                decision.lane,
                decision.provider,
                decision.model,
                decision.usage,
                ok=decision.success,
                cost_usd=decision.cost_usd,
                saved_usd=saved,
            )
        ]
        paid = decision.lane in (Lane.FLAGSHIP_FAST, Lane.FLAGSHIP_DEEP)
        if self._budget is not None and paid and decision.success:
            books.append(self._budget.spent(decision.provider, decision.model, decision.usage))
        await asyncio.gather(*books)  # both books queued at once: one commit with a writer


@dataclass(frozen=True, slots=True)
class _Trace:
    """What every decision of one call shares: the task and where its receipts hang."""

    task_type: str
    parent_id: str | None
    quest_id: str | None
    context: ContextNote | None = None


async def _ready(completion: Completion) -> Completion:
    return completion


def _mask_count(request: CompletionRequest) -> int:
    return sum(m.content.count(mask) for m in request.messages for mask in _MASKS)
