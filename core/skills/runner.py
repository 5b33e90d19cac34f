"""The skill executor: checks, loads and runs one skill under governance, with a receipt.
A skill that raises, hangs or exits never takes Lancelot down."""

from __future__ import annotations

import asyncio
import logging
import secrets
import time
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any

from core.errors import PermanentError
from core.receipts.model import Receipt, ReceiptStatus
from core.skills.api import ActionStatus, SkillFailed
from core.skills.context import Governance, GovernedContext
from core.skills.loader import LoadFailed, is_async, load_entry
from core.skills.manifest import SkillManifest, load_manifest, validate_inputs
from core.skills.package import folder_digest
from core.skills.registry import SkillRecord, SkillRegistry

log = logging.getLogger(__name__)
LOAD_TIMEOUT = 10.0


class RunStatus(StrEnum):
    """How a skill run ended."""

    SUCCESS = "success"
    FAILURE = "failure"
    REFUSED = "refused"  # not run at all
    WAITING = "waiting_approval"  # ran; an action it asked for waits for the owner


_RECEIPT_STATUS = {
    RunStatus.SUCCESS: ReceiptStatus.SUCCESS,
    RunStatus.FAILURE: ReceiptStatus.FAILURE,
    RunStatus.REFUSED: ReceiptStatus.REFUSED,
    RunStatus.WAITING: ReceiptStatus.PENDING,
}


@dataclass(frozen=True, slots=True)
class SkillRun:
    """The outcome of one run, for the owner and for the caller."""

    name: str
    status: RunStatus
    message: str
    outputs: dict[str, Any]
    receipt_id: str
    actions: tuple[str, ...] = ()


class Refused(PermanentError):
    """The skill may not run now; the message says why."""


class SkillRunner:
    """Runs installed, enabled skills."""

    def __init__(self, registry: SkillRegistry, governance: Governance) -> None:
        self._registry = registry
        self._governance = governance

    async def run(
        self,
        name: str,
        args: dict[str, Any],
        *,
        via: str,
        parent_id: str | None = None,
        quest_id: str | None = None,
        scheduled: bool = False,
    ) -> SkillRun:
        """Run a skill; always returns (the outcome says what went wrong, if anything)."""
        run_id = secrets.token_hex(16)
        started = time.perf_counter()
        ctx: GovernedContext | None = None
        try:
            record, manifest = await self._admit(name, scheduled)
            ctx = GovernedContext(
                self._governance,
                manifest,
                record.permissions(manifest),
                validate_inputs(manifest, args),
                record.config,
                run_id,
                quest_id or parent_id,
                via,
                autonomous=scheduled,
            )
            status, message = await self._call(record, manifest, ctx)
        except PermanentError as exc:  # Refused, a bad manifest or bad inputs
            status, message = RunStatus.REFUSED, str(exc)
        outputs, actions = (
            (dict(ctx.outputs), tuple(a.text for a in ctx.actions)) if ctx else ({}, ())
        )
        run = SkillRun(name, status, message, outputs, run_id, actions)
        self._receipt(run, args, started, parent_id, quest_id or parent_id)
        return run

    async def _admit(self, name: str, scheduled: bool) -> tuple[SkillRecord, SkillManifest]:
        record = await self._registry.get(name)
        if record is None:
            raise Refused(f"no skill named {name!r} is installed")
        if not record.enabled:
            raise Refused(f"{name} is disabled; enable it with /skills")
        manifest, digest = await asyncio.to_thread(_inspect, record.path)
        if digest != record.digest:
            raise Refused(f"{name} changed on disk since it was installed; reinstall it")
        if scheduled and not manifest.scheduling.eligible:
            raise Refused(f"{name} may not run on a schedule (its manifest says so)")
        return record, manifest

    async def _call(
        self, record: SkillRecord, manifest: SkillManifest, ctx: GovernedContext
    ) -> tuple[RunStatus, str]:
        try:
            async with asyncio.timeout(LOAD_TIMEOUT):
                entry = await asyncio.to_thread(load_entry, manifest, record.path, record.digest)
        except (LoadFailed, TimeoutError) as exc:
            return RunStatus.FAILURE, f"could not load: {exc or 'import timed out'}"
        try:
            async with asyncio.timeout(manifest.timeout_seconds):
                if is_async(entry):
                    await entry(ctx)
                else:
                    await asyncio.to_thread(entry, ctx)
        except TimeoutError:
            return RunStatus.FAILURE, f"timed out after {manifest.timeout_seconds:g} s"
        except SkillFailed as exc:
            return RunStatus.FAILURE, str(exc)
        except (Exception, SystemExit) as exc:
            log.exception("skill %s raised", manifest.name)
            return RunStatus.FAILURE, f"the skill raised {type(exc).__name__}: {exc}"
        missing = [n for n, s in manifest.outputs.items() if s.required and n not in ctx.outputs]
        if missing:
            return RunStatus.FAILURE, f"it did not write the output {', '.join(missing)}"
        if any(a.status is ActionStatus.WAITING_APPROVAL for a in ctx.actions):
            return RunStatus.WAITING, "waiting for your approval"
        return RunStatus.SUCCESS, "done"

    def _receipt(
        self,
        run: SkillRun,
        args: dict[str, Any],
        started: float,
        parent_id: str | None,
        quest_id: str | None,
    ) -> None:
        self._governance.ledger.append(
            Receipt(
                "skill_run",
                run.name,
                inputs=args,
                outputs={"outputs": run.outputs, "actions": list(run.actions)},
                status=_RECEIPT_STATUS[run.status],
                duration_ms=(time.perf_counter() - started) * 1000,
                parent_id=parent_id,
                quest_id=quest_id,
                error_message=None if run.status is RunStatus.SUCCESS else run.message,
                metadata={"status": str(run.status)},
                id=run.receipt_id,
            )
        )


def _inspect(folder: Path) -> tuple[SkillManifest, str]:
    """The validated manifest (first: an invalid one stops here) and the content hash."""
    return load_manifest(folder), folder_digest(folder)
