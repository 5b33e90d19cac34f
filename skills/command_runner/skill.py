"""command_runner: one shell command through governance (refused, asked or run)."""

from __future__ import annotations

from core.skills.api import SkillContext, ToolAction


async def run(ctx: SkillContext) -> None:
    """Run the `command` input; write its status, exit code and output."""
    command = str(ctx.read_input("command"))
    # Facts governance cannot know from the line alone stay unset: the Soul counts them
    # as the worst case (an mv is taken to overwrite).
    outcome = await ctx.run(ToolAction("shell.exec", command, {"in_workspace": True}))
    ctx.write_output("status", str(outcome.status))
    if outcome.exit_code is not None:
        ctx.write_output("exit_code", outcome.exit_code)
    ctx.write_output("output", outcome.text)
