"""UIBuilder (ui.scaffold): writes a template scaffold into a new workspace folder, never over
anything that exists."""

from __future__ import annotations

import asyncio
import hashlib
import os
import re
from pathlib import Path

from core.errors import ToolFailed
from core.tools.action import ToolAction
from core.tools.base import ToolResult
from core.tools.capability import CapabilityTokens
from core.tools.file_ops import text_param
from core.tools.scaffolds import TEMPLATES, render
from core.tools.workspace import Workspace

CAPABILITIES = ("ui.scaffold",)
# Titles land in HTML, JS, TOML and Python text: a plain charset needs no escaping anywhere.
_TITLE = re.compile(r"^\w[\w .,:!?'()-]{0,79}$")
_PACKAGE = re.compile(r"^[a-z_][a-z0-9_]{0,39}$")


class UIBuilder:
    """Scaffolds `template` (static_page, python_package) at params["path"]."""

    name = "ui_builder"

    def __init__(self, workspace: Workspace, capabilities: CapabilityTokens) -> None:
        self._ws = workspace
        self._capabilities = capabilities

    async def run(self, action: ToolAction, capability: str | None) -> ToolResult:
        """Write the scaffold after checking the capability token."""
        self._capabilities.check(capability, action.digest)
        if action.capability not in CAPABILITIES:
            raise ToolFailed(f"UIBuilder does not serve {action.capability}")
        params = action.params
        name = text_param(params, "template")
        template = TEMPLATES.get(name)
        if template is None:
            raise ToolFailed(f"unknown template {name!r}; known: {', '.join(sorted(TEMPLATES))}")
        title = text_param(params, "title", "My project")
        if not _TITLE.match(title):
            raise ToolFailed("a title is up to 80 letters, digits, spaces and .,:!?'()-")
        package = text_param(params, "package", re.sub(r"\W+", "_", title.lower()).strip("_"))
        if not _PACKAGE.match(package):
            raise ToolFailed(f"{package!r} is not a Python package name")
        root = self._ws.resolve(text_param(params, "path"))
        if root == self._ws.root or root.exists():
            shown = self._ws.display(root)
            return ToolResult(1, f"{shown} already exists; a scaffold goes into a new folder")
        values = {"title": title, "package": package}
        files = {render(rel, values): render(text, values) for rel, text in template.items()}
        changes = await asyncio.to_thread(self._write_all, root, files)
        listing = "\n".join(changes)
        return ToolResult(0, f"{name} scaffold:\n{listing}", file_changes=changes)

    def _write_all(self, root: Path, files: dict[str, str]) -> dict[str, str | None]:
        changes: dict[str, str | None] = {}
        inside = root.relative_to(self._ws.root)
        for rel, text in files.items():
            path = self._ws.resolve((inside / rel).as_posix())
            data = text.encode("utf-8")
            with self._ws.parent_of(path, create=True) as (fd, name):
                flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW
                with os.fdopen(os.open(name, flags, 0o644, dir_fd=fd), "wb") as file:
                    file.write(data)
            changes[self._ws.display(path)] = hashlib.sha256(data).hexdigest()
        return changes
