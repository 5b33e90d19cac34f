"""The workspace file and repository tools the model may call, one AgentTool each."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from core.agent.tools import AgentTool, ToolTable, run_command_tool
from core.llm.types import ToolSpec
from core.tools.action import ToolAction
from core.tools.file_ops import file_action
from core.tools.workspace import Workspace

ROOT = "/workspace"
MAX_CONTENT = 1 << 20  # FileOps reads at most this much back, so writes stay within it too


def _path(what: str) -> dict[str, Any]:
    return {"type": "string", "minLength": 1, "maxLength": 1000, "description": what}


def _flag(what: str) -> dict[str, Any]:
    return {"type": "boolean", "description": what}


def _object(properties: dict[str, Any], required: tuple[str, ...] = ()) -> dict[str, Any]:
    """A closed object: no parameter the schema does not name (the facts governance
    relies on, such as `overwrites`, are computed here and never taken from the model)."""
    return {
        "type": "object",
        "properties": properties,
        "required": list(required),
        "additionalProperties": False,
    }


def _file(workspace: Workspace, capability: str) -> Callable[[dict[str, Any]], ToolAction]:
    return lambda args: file_action(workspace, capability, dict(args))


def _listing(workspace: Workspace, capability: str) -> Callable[[dict[str, Any]], ToolAction]:
    """The path defaults to the workspace root, named, so receipts say what was looked at."""
    return lambda args: file_action(workspace, capability, {"path": ROOT, **args})


def _repo(capability: str) -> Callable[[dict[str, Any]], ToolAction]:
    return lambda args: ToolAction(capability, None, {"path": ROOT, **args})


def _tool(name: str, description: str, parameters: dict[str, Any]) -> ToolSpec:
    return ToolSpec(name=name, description=description, parameters=parameters)


def file_tools(workspace: Workspace) -> list[AgentTool]:
    """read_file, write_file, list_files, delete_file and move_file (the file.* capabilities)."""
    where = "A path in the workspace, e.g. /workspace/notes.txt."
    return [
        AgentTool(
            _tool(
                "read_file",
                "Read a text file in the workspace.",
                _object({"path": _path(where)}, ("path",)),
            ),
            "file.read",
            _file(workspace, "file.read"),
        ),
        AgentTool(
            _tool(
                "write_file",
                "Create or replace a text file in the workspace with `content` (atomic).",
                _object(
                    {
                        "path": _path(where),
                        "content": {"type": "string", "maxLength": MAX_CONTENT},
                    },
                    ("path", "content"),
                ),
            ),
            "file.write",
            _file(workspace, "file.write"),
        ),
        AgentTool(
            _tool(
                "list_files",
                "List a workspace folder (sizes included); the root when no path is given.",
                _object({"path": _path(where), "recursive": _flag("include subfolders")}),
            ),
            "file.list",
            _listing(workspace, "file.list"),
        ),
        AgentTool(
            _tool(
                "delete_file",
                "Delete a file (or, with recursive, a folder) in the workspace. Irreversible: "
                "it waits for the owner's approval.",
                _object(
                    {"path": _path(where), "recursive": _flag("delete a folder and its contents")},
                    ("path",),
                ),
            ),
            "file.delete",
            _file(workspace, "file.delete"),
        ),
        AgentTool(
            _tool(
                "move_file",
                "Move or rename a file in the workspace. Moving over an existing file waits "
                "for the owner's approval.",
                _object({"source": _path(where), "target": _path(where)}, ("source", "target")),
            ),
            "file.move",
            _file(workspace, "file.move"),
        ),
    ]


def repo_tools() -> list[AgentTool]:
    """repo_status and repo_diff: read-only looks at a git repository in the workspace."""
    where = "The repository's folder in the workspace; the workspace itself when omitted."
    return [
        AgentTool(
            _tool(
                "repo_status",
                "Git status (short, with the branch) of a repository in the workspace.",
                _object({"path": _path(where)}),
            ),
            "repo.status",
            _repo("repo.status"),
        ),
        AgentTool(
            _tool(
                "repo_diff",
                "Git diff of a repository in the workspace: unstaged changes, or staged ones.",
                _object({"path": _path(where), "staged": _flag("show staged changes instead")}),
            ),
            "repo.diff",
            _repo("repo.diff"),
        ),
    ]


def default_tools(workspace: Workspace) -> ToolTable:
    """The tools every install offers the model: the shell, files, repositories."""
    return ToolTable([run_command_tool(workspace), *file_tools(workspace), *repo_tools()])
