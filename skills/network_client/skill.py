"""network_client: one net.request action; the web tools decide allowlists and limits."""

from __future__ import annotations

from core.skills.api import SkillContext, ToolAction


async def run(ctx: SkillContext) -> None:
    """Make the request; write how it went and the (bounded) response."""
    method = str(ctx.read_input("method") or "GET").upper()
    params: dict[str, object] = {"method": method, "url": ctx.read_input("url")}
    body = ctx.read_input("body")
    if body is not None:
        params["body"] = body
    outcome = await ctx.run(ToolAction("net.request", None, params))
    ctx.write_output("status", str(outcome.status))
    ctx.write_output("response", outcome.text)
