"""send_file: the model's way to hand the owner a workspace file (a report it wrote, an
image it made), governed as the `file.send` capability (a read of one workspace file)."""

from __future__ import annotations

from typing import Any

from core.agent.workspace_tools import closed
from core.files.outgoing import FILE_SEND
from core.tools.action import ToolAction
from core.tools.definition import NOTHING, ToolDefinition, ToolFlow, ToolSetup


def _action(_: ToolSetup, args: dict[str, Any]) -> ToolAction:
    return ToolAction(
        FILE_SEND, None, {"path": str(args["path"]), "caption": str(args.get("caption", ""))}
    )


# Images (.png, .jpg, .webp) reach the phone as photos. It sends to the owner's own chat:
# nothing leaves for anyone else, so it sends no parameter out.
SEND_FILE = ToolDefinition(
    name="send_file",
    capability=FILE_SEND,
    description=(
        "Send a file from the workspace to the owner's chat, e.g. a report you wrote or an "
        "image you made (images arrive as photos, anything else as a document)."
    ),
    parameters=closed(
        {
            "path": {
                "type": "string",
                "minLength": 1,
                "maxLength": 1000,
                "description": "A path in the workspace, e.g. /workspace/chart.png.",
            },
            "caption": {"type": "string", "maxLength": 1000},
        },
        ("path",),
    ),
    flow=ToolFlow(NOTHING, targets=("path",)),
    tier="T0",
    to_action=_action,
)
DEFINITIONS = (SEND_FILE,)


def addressed(action: ToolAction, channel: str) -> ToolAction:
    """A file.send action bound to the channel the request came from (the file goes to the
    owner there); any other action as it is."""
    if action.capability != FILE_SEND:
        return action
    return ToolAction(action.capability, action.command, {**action.params, "channel": channel})
