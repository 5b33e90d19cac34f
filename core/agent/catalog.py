"""The built-in tools: each module's definitions, collected into one registry."""

from __future__ import annotations

from core.agent import file_tools, memory_tools, schedule_tools, web_tools, workspace_tools
from core.tools.definition import ToolDefinition
from core.tools.tool_registry import ToolRegistry

BUILT_IN: tuple[ToolDefinition, ...] = (
    *workspace_tools.DEFINITIONS,
    *file_tools.DEFINITIONS,
    *memory_tools.DEFINITIONS,
    *web_tools.DEFINITIONS,
    *schedule_tools.DEFINITIONS,
)


def built_in_tools() -> ToolRegistry:
    """A registry of the built-in tools, open to definitions made at run time (MCP)."""
    return ToolRegistry(BUILT_IN)
