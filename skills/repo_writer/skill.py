"""repo_writer: file.write then repo.commit, each through governance."""

from __future__ import annotations

from core.skills.api import SkillContext, SkillFailed, ToolAction


async def run(ctx: SkillContext) -> None:
    """Write `content` to `path`; commit it when a `message` is given. Stops at the first
    step that did not run, and says why (an unavailable tool, a refusal, an approval)."""
    path = str(ctx.read_input("path"))
    params = {"path": path, "content": ctx.read_input("content"), "in_workspace": True}
    written = await ctx.run(ToolAction("file.write", None, params))
    ctx.write_output("written", written.ok)
    ctx.write_output("committed", False)
    ctx.write_output("detail", written.text)
    if not written.ok:
        raise SkillFailed(f"{path} was not written: {written.text}")
    message = ctx.read_input("message")
    if not message:
        return
    committed = await ctx.run(
        ToolAction("repo.commit", None, {"message": message, "paths": [path]})
    )
    ctx.write_output("committed", committed.ok)
    ctx.write_output("detail", committed.text)
    if not committed.ok:
        raise SkillFailed(f"{path} was written but not committed: {committed.text}")
