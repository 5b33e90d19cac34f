"""MCP servers: their file (`mcp.json`), a supervisor that keeps each running, and calls to
their tools bounded in time and size. The `mcp` SDK is loaded only once a server connects."""

from core.mcp.config import McpConfig, ServerSpec, config_path, load_config
from core.mcp.model import CallResult, ServerState, ToolHints, ToolInfo
from core.mcp.supervisor import McpLimits, McpServers

__all__ = [
    "CallResult",
    "McpConfig",
    "McpLimits",
    "McpServers",
    "ServerSpec",
    "ServerState",
    "ToolHints",
    "ToolInfo",
    "config_path",
    "load_config",
]
