"""/jobs: every job with its next run and last outcome, and Run now / Pause / Resume buttons
(and Delete for jobs created from chat); `/jobs new <schedule> <what>` proposes one; plus the
approval card a gated job sends when it falls due."""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass, field
from typing import Any

from core.bus import Bus
from core.commands.registry import CommandContext, CommandRegistry, PressContext, Router
from core.events import Button, Card, CardKind
from core.receipts.base import ReceiptStore
from core.receipts.model import Receipt, ReceiptStatus
from core.scheduler.chat_jobs import ChatJobs
from core.scheduler.config import JobSpec
from core.scheduler.engine import Scheduler
from core.scheduler.job import JobContext
from core.scheduler.proposals import JobProposals
from core.security.owner_view import OwnerView
from core.security.tokens import ActionTokens

RUN_WAIT = 10.0  # seconds a Run now press waits to show the outcome on the card
TOKEN_TTL = 24 * 3600.0


@dataclass
class JobCommands:
    """Handlers for /jobs and its buttons."""

    scheduler: Scheduler
    tokens: ActionTokens
    bus: Bus
    ledger: ReceiptStore
    owner: OwnerView  # the times in the owner's zone
    chat: ChatJobs | None = None  # jobs created from chat (Delete), with their proposals
    proposals: JobProposals | None = None
    asking: dict[str, str] = field(default_factory=dict)  # job -> its undecided approval card

    def register(self, registry: CommandRegistry) -> None:
        """Add /jobs, its buttons, and the approval buttons of gated jobs."""
        router = Router("jobs")
        router.command(
            "jobs", "scheduled jobs: next run, last outcome, run/pause/resume", self.jobs
        )
        router.action("jobs.run", self._run)
        router.action("jobs.pause", self._pause)
        router.action("jobs.resume", self._resume)
        router.action("jobs.delete", self._delete)
        router.action("jobs.approve", self._approve)
        router.action("jobs.deny", self._deny)
        self.scheduler.ask_approval = self.ask_approval
        registry.include(router)

    async def jobs(self, ctx: CommandContext) -> Card:
        """The jobs card; `/jobs new <schedule> <what>` proposes a job instead."""
        head, _, rest = ctx.args.partition(" ")
        if head.lower() == "new" and self.proposals is not None:
            card_id = f"jobs-{ctx.receipt_id}"
            offered = await self.proposals.offer(rest, card_id, via="/jobs new", kind="task")
            return offered.card
        return await self._card(f"jobs-{ctx.receipt_id}")

    async def _card(self, card_id: str, note: str = "") -> Card:
        lines, buttons = [], []
        now = self.scheduler.wall.time()
        for spec, state in await self.scheduler.states():
            if not spec.enabled:
                status = "disabled"
            elif state.paused:
                status = "paused"
            elif state.next_run_at:
                status = f"next {self.owner.when(state.next_run_at, now)}"
            elif self.scheduler.start_error:
                status = "not scheduled: the scheduler did not start (/health)"
            elif not self.scheduler.started.is_set():
                status = "scheduled once Lancelot has started"  # its next run is set then
            else:
                status = "not scheduled"
            last = (
                f"{state.last_outcome} {self.owner.when(state.last_run_at, now)}"
                if state.last_run_at
                else "never run"
            )
            lines.append(f"{spec.name} ({spec.describe_trigger}): {status}; last: {last}")
            payload = {"job": spec.name}
            if spec.enabled:  # a disabled job does not run, so nothing offers to run it
                token = await self._token("jobs.run", payload, card_id)
                buttons.append(Button(f"Run now: {spec.name}", token))
            if spec.enabled:
                action, label = (
                    ("jobs.resume", "Resume") if state.paused else ("jobs.pause", "Pause")
                )
                buttons.append(
                    Button(f"{label}: {spec.name}", await self._token(action, payload, card_id))
                )
            if self.chat is not None and self.chat.owns(spec.name):
                token = await self._token("jobs.delete", payload, card_id)
                buttons.append(Button(f"Delete: {spec.name}", token))
        body = "\n".join(lines) + (f"\n\n{note}" if note else "")
        return Card(
            kind=CardKind.REPLY,
            title="Scheduled jobs",
            body=body,
            buttons=tuple(buttons),
            correlation_id=card_id,
        )

    async def _token(self, action: str, payload: dict[str, Any], card_id: str) -> str:
        return await self.tokens.issue(action, payload, card_id, ttl=TOKEN_TTL)

    def _job(self, ctx: PressContext) -> str | None:
        name = str(ctx.payload.get("job", ""))
        return name if name in self.scheduler.specs else None

    async def _run(self, ctx: PressContext) -> Card:
        name = self._job(ctx)
        if name is None:
            return await self._card(ctx.card_id, "That job no longer exists.")
        if not self.scheduler.specs[name].enabled:
            return await self._card(ctx.card_id, f"{name} is disabled, so it does not run.")
        run_id = await self.scheduler.run_now(name)
        if run_id is None:
            return await self._card(ctx.card_id, f"{name} is already running.")
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(RUN_WAIT):
                await self.scheduler.idle()
        return await self._card(ctx.card_id, await self._ran(name, run_id))

    async def _ran(self, name: str, run_id: int) -> str:
        """What became of a Run now, from the job's own state: it ran, or why it did not."""
        state = dict((s.name, st) for s, st in await self.scheduler.states())[name]
        if state.last_outcome in (None, "running"):
            return f"{name} (run #{run_id}) is still running."
        if state.last_outcome == "ok":
            return f"Ran {name} (run #{run_id})."
        return f"{name} (run #{run_id}) {state.last_outcome}: {state.last_detail}"

    async def _pause(self, ctx: PressContext) -> Card:
        name = self._job(ctx)
        if name is not None:
            await self.scheduler.pause(name)
            self._record("job_paused", name)
        return await self._card(ctx.card_id, f"Paused {name}." if name else "Unknown job.")

    async def _resume(self, ctx: PressContext) -> Card:
        name = self._job(ctx)
        if name is not None:
            await self.scheduler.resume(name)
            self._record("job_resumed", name)
        return await self._card(ctx.card_id, f"Resumed {name}." if name else "Unknown job.")

    async def _delete(self, ctx: PressContext) -> Card:
        name = self._job(ctx)
        if name is None or self.chat is None or not await self.chat.delete(name):
            return await self._card(ctx.card_id, "That job cannot be deleted from chat.")
        return await self._card(ctx.card_id, f"Deleted {name}.")

    def _record(self, kind: str, name: str) -> None:
        self.ledger.append(Receipt(action_type=kind, action_name=name, metadata={"via": "owner"}))

    async def ask_approval(self, spec: JobSpec, ctx: JobContext) -> None:
        """A gated job fell due: ask the owner with an approval card (Approve / Deny), unless
        an earlier card for it is still undecided (a frequent job does not pile up cards)."""
        if spec.name in self.asking:
            return
        card_id = f"job-approval-{spec.name}-{ctx.run_id}"
        self.asking[spec.name] = card_id
        payload = {"job": spec.name, "run_id": ctx.run_id}
        due = self.owner.when(ctx.scheduled_for, self.scheduler.wall.time())
        card = Card(
            kind=CardKind.APPROVAL,
            title=f"Run {spec.name}?",
            body=f"The scheduled job {spec.name} ({spec.tier}) was due at {due}. Scheduled "
            "work above the Soul's boundary runs only when you approve it.",
            buttons=(
                Button("Approve", await self._token("jobs.approve", payload, card_id)),
                Button("Deny", await self._token("jobs.deny", payload, card_id)),
            ),
            correlation_id=card_id,
        )
        await self.bus.broadcast(card, key=card_id)

    def _decided(self, name: str | None, card_id: str) -> None:
        if name is not None and self.asking.get(name) == card_id:
            del self.asking[name]

    async def _approve(self, ctx: PressContext) -> Card:
        name = self._job(ctx)
        self._decided(name, ctx.card_id)
        if name is None:
            return Card(kind=CardKind.APPROVAL, title="Unknown job", correlation_id=ctx.card_id)
        run_id = await self.scheduler.run_now(name, approved=True)
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(RUN_WAIT):
                await self.scheduler.idle()
        state = dict((s.name, st) for s, st in await self.scheduler.states())[name]
        outcome = f"{state.last_outcome}: {state.last_detail}" if run_id else "already running"
        return Card(
            kind=CardKind.APPROVAL,
            title=f"{name}: approved by owner",
            body=outcome,
            correlation_id=ctx.card_id,
        )

    async def _deny(self, ctx: PressContext) -> Card:
        self._decided(self._job(ctx), ctx.card_id)
        name = self._job(ctx) or "?"
        self.ledger.append(
            Receipt(
                action_type="scheduled_job_skipped",
                action_name=name,
                inputs={"run_id": ctx.payload.get("run_id")},
                outputs={"detail": "denied by the owner"},
                status=ReceiptStatus.SKIPPED,
                metadata={"gate": "owner_approval", "outcome": "skipped", "denied": True},
            )
        )
        return Card(
            kind=CardKind.APPROVAL, title=f"{name}: denied by owner", correlation_id=ctx.card_id
        )
