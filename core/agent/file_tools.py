"""send_file: the model's way to hand the owner a workspace file (a report it wrote, an
image it made), governed as the `file.send` capability (a read of one workspace file)."""

from __future__ import annotations

from typing import Any

from core.agent.tools import AgentTool
from core.files.outgoing import FILE_SEND
from core.llm.types import ToolSpec
from core.tools.action import ToolAction


def send_file_tool() -> AgentTool:
    """The send_file tool; images (.png, .jpg, .webp) reach the phone as photos."""
    spec = ToolSpec(
        "send_file",
        "Send a file from the workspace to the owner's chat, e.g. a report you wrote or an "
        "image you made (images arrive as photos, anything else as a document).",
        {
            "type": "object",
            "properties": {
                "path": {
                    "type": "string",
                    "minLength": 1,
                    "maxLength": 1000,
                    "description": "A path in the workspace, e.g. /workspace/chart.png.",
                },
                "caption": {"type": "string", "maxLength": 1000},
            },
            "required": ["path"],
            "additionalProperties": False,
        },
    )
    return AgentTool(spec, FILE_SEND, _action)


def _action(args: dict[str, Any]) -> ToolAction:
    return ToolAction(
        FILE_SEND, None, {"path": str(args["path"]), "caption": str(args.get("caption", ""))}
    )


def addressed(action: ToolAction, channel: str) -> ToolAction:
    """A file.send action bound to the channel the request came from (the file goes to the
    owner there); any other action as it is."""
    if action.capability != FILE_SEND:
        return action
    return ToolAction(action.capability, action.command, {**action.params, "channel": channel})
