"""The workspace's tools the model may call: the shell, files and repositories, one
definition each."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from core.governance.commands import SHELL, shell_action
from core.tools.action import ToolAction
from core.tools.definition import (
    CONTENTS,
    NOTHING,
    PRIVATE,
    ToolDefinition,
    ToolFlow,
    ToolSetup,
)
from core.tools.file_ops import file_action

ROOT = "/workspace"
MAX_CONTENT = 1 << 20  # FileOps reads at most this much back, so writes stay within it too
_WHERE = "A path in the workspace, e.g. /workspace/notes.txt."
_REPO = "The repository's folder in the workspace; the workspace itself when omitted."

Builder = Callable[[ToolSetup, dict[str, Any]], ToolAction]


def _path(what: str = _WHERE) -> dict[str, Any]:
    return {"type": "string", "minLength": 1, "maxLength": 1000, "description": what}


def _flag(what: str) -> dict[str, Any]:
    return {"type": "boolean", "description": what}


def closed(properties: dict[str, Any], required: tuple[str, ...] = ()) -> dict[str, Any]:
    """A closed object: no parameter the schema does not name (the facts governance
    relies on, such as `overwrites`, are computed here and never taken from the model)."""
    return {
        "type": "object",
        "properties": properties,
        "required": list(required),
        "additionalProperties": False,
    }


def _file(capability: str) -> Builder:
    return lambda setup, args: file_action(setup.workspace, capability, dict(args))


def _listing(capability: str) -> Builder:
    """The path defaults to the workspace root, named, so receipts say what was looked at."""
    return lambda setup, args: file_action(setup.workspace, capability, {"path": ROOT, **args})


def _repo(capability: str) -> Builder:
    return lambda _, args: ToolAction(capability, None, {"path": ROOT, **args})


RUN_COMMAND = ToolDefinition(
    name="run_command",
    capability=SHELL,
    description=(
        "Run one command line in the owner's workspace (/workspace), under governance. "
        "Reads run at once; destructive commands (rm, mv over a file, git push) wait for "
        "the owner's approval; denylisted commands are refused with the rule and safer "
        "alternatives. No pipes, redirects or substitutions."
    ),
    parameters=closed(
        {
            "command": {
                "type": "string",
                "minLength": 1,
                "maxLength": 2000,
                "description": "The exact command line, e.g. 'ls -la /workspace'.",
            }
        },
        ("command",),
    ),
    flow=ToolFlow(CONTENTS, changes_by_effect=True),
    tier="T2",
    to_action=lambda setup, args: shell_action(str(args["command"]), setup.workspace),
)
READ_FILE = ToolDefinition(
    name="read_file",
    capability="file.read",
    description="Read a text file in the workspace.",
    parameters=closed({"path": _path()}, ("path",)),
    flow=ToolFlow(CONTENTS, targets=("path",)),
    tier="T0",
    to_action=_file("file.read"),
)
WRITE_FILE = ToolDefinition(
    name="write_file",
    capability="file.write",
    description="Create or replace a text file in the workspace with `content` (atomic).",
    parameters=closed(
        {"path": _path(), "content": {"type": "string", "maxLength": MAX_CONTENT}},
        ("path", "content"),
    ),
    flow=ToolFlow(NOTHING, changes=("path",)),
    tier="T1",
    to_action=_file("file.write"),
)
LIST_FILES = ToolDefinition(
    name="list_files",
    capability="file.list",
    description="List a workspace folder (sizes included); the root when no path is given.",
    parameters=closed({"path": _path(), "recursive": _flag("include subfolders")}),
    flow=ToolFlow(PRIVATE, targets=("path",)),
    tier="T0",
    to_action=_listing("file.list"),
)
DELETE_FILE = ToolDefinition(
    name="delete_file",
    capability="file.delete",
    description=(
        "Delete a file (or, with recursive, a folder) in the workspace. Irreversible: "
        "it waits for the owner's approval."
    ),
    parameters=closed(
        {"path": _path(), "recursive": _flag("delete a folder and its contents")}, ("path",)
    ),
    flow=ToolFlow(NOTHING, changes=("path",)),
    tier="T3",
    to_action=_file("file.delete"),
)
MOVE_FILE = ToolDefinition(
    name="move_file",
    capability="file.move",
    description=(
        "Move or rename a file in the workspace. Moving over an existing file waits "
        "for the owner's approval."
    ),
    parameters=closed({"source": _path(), "target": _path()}, ("source", "target")),
    flow=ToolFlow(NOTHING, changes=("source", "target")),
    tier="T1",
    to_action=_file("file.move"),
)
REPO_STATUS = ToolDefinition(
    name="repo_status",
    capability="repo.status",
    description="Git status (short, with the branch) of a repository in the workspace.",
    parameters=closed({"path": _path(_REPO)}),
    flow=ToolFlow(PRIVATE, targets=("path",)),
    tier="T0",
    to_action=_repo("repo.status"),
)
REPO_DIFF = ToolDefinition(
    name="repo_diff",
    capability="repo.diff",
    description=("Git diff of a repository in the workspace: unstaged changes, or staged ones."),
    parameters=closed({"path": _path(_REPO), "staged": _flag("show staged changes instead")}),
    flow=ToolFlow(CONTENTS, targets=("path",)),
    tier="T0",
    to_action=_repo("repo.diff"),
)
DEFINITIONS = (
    RUN_COMMAND,
    READ_FILE,
    WRITE_FILE,
    LIST_FILES,
    DELETE_FILE,
    MOVE_FILE,
    REPO_STATUS,
    REPO_DIFF,
)
