"""The model router: picks a lane, redacts what leaves the machine, escalates, keeps receipts."""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, replace

from core.errors import ProviderUnavailable
from core.llm.decision import RouterDecision
from core.llm.escalation import EscalationPolicy
from core.llm.flagship import FlagshipConfig
from core.llm.prices import PriceTable
from core.llm.providers import no_provider_answer
from core.llm.redaction import PiiRedactor
from core.llm.types import Completion, CompletionRequest, Lane, Provider, Role, Usage
from core.llm.usage import UsageBook
from core.receipts.base import ReceiptStore

log = logging.getLogger(__name__)

LOCAL_LANES = (Lane.LOCAL_REDACTION, Lane.LOCAL_UTILITY)
REFERENCE_MODEL = ("openai", "gpt-4o-mini")  # prices local savings when no flagship is set
_MASKS = ("[REDACTED]", "[EMAIL]", "[PHONE]", "[CARD]", "[IBAN]")


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
    ) -> None:
        self._ledger = ledger
        self._usage = usage
        self._prices = prices
        self._redactor = redactor
        self._local = local
        self._flagship = flagship
        self._escalation = escalation or EscalationPolicy()
        self.no_flagship_reason = no_flagship_reason

    def has_flagship(self) -> bool:
        """Whether a flagship provider (OpenAI, Anthropic or Gemini) is configured."""
        return self._flagship is not None

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
        trace = (task_type, parent_id, quest_id)
        if lane is Lane.LOCAL_REDACTION:
            return await self._redaction(request, trace)
        if lane is Lane.LOCAL_UTILITY:
            return await self._call_local(request, trace)
        if self._flagship is None:
            await self._record(
                RouterDecision(
                    task_type,
                    lane,
                    "none",
                    "",
                    "no flagship configured",
                    0.0,
                    False,
                    error=self.no_flagship_reason,
                ),
                trace,
            )
            raise ProviderUnavailable(
                "no flagship provider", user_message=no_provider_answer(self.no_flagship_reason)
            )
        return await self._call_flagship(self._flagship, request, lane, trace)

    async def _call_flagship(
        self,
        flagship: Flagship,
        request: CompletionRequest,
        lane: Lane,
        trace: tuple[str, str | None, str | None],
    ) -> Completion:
        rationale = f"{lane.value} requested"
        if lane is Lane.FLAGSHIP_FAST and (why := self._escalation.reason(request)):
            lane, rationale = Lane.FLAGSHIP_DEEP, f"escalated to deep: {why}"
        masked = self._redactor.request(request)
        redactions = _mask_count(masked) - _mask_count(request)
        try:
            return await self._try(flagship, masked, lane, rationale, redactions, trace)
        except ProviderUnavailable as exc:
            if lane is not Lane.FLAGSHIP_FAST:
                raise
            log.info("fast lane failed (%s); escalating to deep", exc)
            masked = replace(masked, model=None)
            why = "escalated to deep: the fast call failed"
            return await self._try(flagship, masked, Lane.FLAGSHIP_DEEP, why, redactions, trace)

    async def _try(
        self,
        flagship: Flagship,
        request: CompletionRequest,
        lane: Lane,
        rationale: str,
        redactions: int,
        trace: tuple[str, str | None, str | None],
    ) -> Completion:
        model = request.model or flagship.config.model_for(lane)
        name = flagship.config.name
        started = time.perf_counter()
        try:
            completion = await flagship.provider.complete(replace(request, model=model))
        except ProviderUnavailable as exc:
            elapsed = (time.perf_counter() - started) * 1000
            decision = RouterDecision(
                trace[0],
                lane,
                name,
                model,
                rationale,
                elapsed,
                False,
                error=str(exc),
                redactions=redactions,
            )
            await self._record(decision, trace)
            raise
        elapsed = (time.perf_counter() - started) * 1000
        cost = self._prices.cost(name, completion.model or model, completion.usage)
        decision = RouterDecision(
            trace[0],
            lane,
            name,
            completion.model or model,
            rationale,
            elapsed,
            True,
            usage=completion.usage,
            cost_usd=cost,
            redactions=redactions,
        )
        await self._record(decision, trace)
        return completion

    async def _call_local(
        self, request: CompletionRequest, trace: tuple[str, str | None, str | None]
    ) -> Completion:
        lane = Lane.LOCAL_UTILITY
        if self._local is None:
            await self._record(
                RouterDecision(
                    trace[0],
                    lane,
                    "local",
                    "",
                    "no local model",
                    0.0,
                    False,
                    error="no local model",
                ),
                trace,
            )
            raise ProviderUnavailable("no local model", user_message="No local model is set up.")
        started = time.perf_counter()
        try:
            completion = await self._local.complete(request)
        except ProviderUnavailable as exc:
            elapsed = (time.perf_counter() - started) * 1000
            decision = RouterDecision(
                trace[0], lane, "local", "", "local task", elapsed, False, error=str(exc)
            )
            await self._record(decision, trace)
            raise
        elapsed = (time.perf_counter() - started) * 1000
        decision = RouterDecision(
            trace[0],
            lane,
            "local",
            completion.model,
            "local task",
            elapsed,
            True,
            usage=completion.usage,
        )
        await self._record(decision, trace, saved=self._flagship_cost(completion.usage))
        return completion

    async def _redaction(
        self, request: CompletionRequest, trace: tuple[str, str | None, str | None]
    ) -> Completion:
        started = time.perf_counter()
        last = request.messages[-1].content if request.messages else ""
        text = self._redactor.text(last)
        elapsed = (time.perf_counter() - started) * 1000
        count = sum(text.count(m) for m in _MASKS) - sum(last.count(m) for m in _MASKS)
        decision = RouterDecision(
            trace[0],
            Lane.LOCAL_REDACTION,
            "local",
            "redactor",
            "deterministic redaction",
            elapsed,
            True,
            redactions=count,
        )
        await self._record(decision, trace)
        return Completion(text=text, model="redactor", provider="local", finish_reason="stop")

    def _flagship_cost(self, usage: Usage) -> float:
        """What these tokens would have cost on the flagship's fast model."""
        if self._flagship is not None:
            config = self._flagship.config
            return self._prices.cost(config.name, config.fast_model, usage)
        return self._prices.cost(*REFERENCE_MODEL, usage)

    async def _record(
        self,
        decision: RouterDecision,
        trace: tuple[str, str | None, str | None],
        saved: float = 0.0,
    ) -> None:
        self._ledger.append(decision.receipt(parent_id=trace[1], quest_id=trace[2]))
        await self._usage.record(
            decision.lane,
            decision.provider,
            decision.model,
            decision.usage,
            ok=decision.success,
            cost_usd=decision.cost_usd,
            saved_usd=saved,
        )


def _mask_count(request: CompletionRequest) -> int:
    return sum(
        m.content.count(mask)
        for m in request.messages
        if m.role is not Role.SYSTEM
        for mask in _MASKS
    )
