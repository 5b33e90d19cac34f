"""service_runner: the configured service command, through governance."""

from __future__ import annotations

from core.skills.api import SkillContext, SkillFailed, ToolAction


async def run(ctx: SkillContext) -> None:
    """Run the configured `command`; refuse to guess one when none is set."""
    command = str(ctx.read_config("command", "") or "").strip()
    if not command:
        raise SkillFailed("no service command is configured for service_runner")
    outcome = await ctx.run(ToolAction("shell.exec", command, {"in_workspace": True}))
    ctx.write_output("status", str(outcome.status))
    if outcome.exit_code is not None:
        ctx.write_output("exit_code", outcome.exit_code)
    ctx.write_output("output", outcome.text)
