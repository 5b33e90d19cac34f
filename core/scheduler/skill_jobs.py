"""`skill:<name>` jobs: the skill runs as scheduled work, so every action it asks for is
decided with autonomous=True and the Soul's scheduling boundary applies (a T3 step waits for
an approval card; nothing irreversible happens unasked)."""

from __future__ import annotations

from typing import Any

from core.errors import ToolFailed
from core.scheduler.job import JobContext, JobRunner
from core.skills.runner import RunStatus, SkillRunner


def skill_job(runner: SkillRunner, skill: str, args: dict[str, Any]) -> JobRunner:
    """The job code that runs `skill` with `args` on a schedule."""

    async def run(ctx: JobContext) -> str:
        outcome = await runner.run(skill, dict(args), via=f"scheduler:{ctx.job}", scheduled=True)
        if outcome.status in (RunStatus.FAILURE, RunStatus.REFUSED):
            raise ToolFailed(outcome.message, user_message=f"{skill}: {outcome.message}"[:300])
        if outcome.status is RunStatus.WAITING:
            return f"{skill}: waiting for your approval ({'; '.join(outcome.actions)[:200]})"
        return f"{skill}: {outcome.message or 'done'}"[:300]

    return run
