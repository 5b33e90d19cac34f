"""RepoOps: git status, diff, apply_patch, commit, branch and checkout in a workspace repository.

git runs as a subprocess with an argument list (never a shell), pinned to the repository's own
`.git` (no discovery upwards), without system or user config, hooks or fsmonitor; a repository
whose config would make git run programs (filters, diff drivers, editors...) is refused.
"""

from __future__ import annotations

import asyncio
import fnmatch
import os
from pathlib import Path
from typing import Any

from core.errors import PolicyDenied, ToolFailed
from core.tools.action import ToolAction
from core.tools.base import ToolResult, bounded, file_digest
from core.tools.capability import CapabilityTokens
from core.tools.file_ops import text_param
from core.tools.workspace import Workspace

CAPABILITIES = (
    "repo.status",
    "repo.diff",
    "repo.apply_patch",
    "repo.commit",
    "repo.branch",
    "repo.checkout",
)
TIMEOUT = 60.0
# Config keys that make git start a program; lowercased as `git config --name-only` prints.
RISKY_CONFIG = (
    "core.fsmonitor",
    "core.hookspath",
    "core.sshcommand",
    "core.editor",
    "core.pager",
    "core.askpass",
    "core.gitproxy",
    "core.alternaterefscommand",
    "sequence.editor",
    "gpg.program",
    "gpg.*.program",
    "filter.*",
    "diff.external",
    "diff.*.command",
    "diff.*.textconv",
    "merge.*.driver",
    "credential.*",
    "include.*",
    "includeif.*",
)
OVERRIDES = (
    *("-c", "core.hooksPath=/dev/null"),
    *("-c", "core.fsmonitor=false"),
    *("-c", "commit.gpgSign=false"),
    *("-c", "protocol.allow=never"),
)


# Files in .git that point git at another repository's objects or refs.
POINTERS = ("commondir", "objects/info/alternates", "objects/info/http-alternates")


class RepoOps:
    """The repo.* capabilities on the repository at params["path"] (default: the workspace)."""

    name = "repo_ops"

    def __init__(
        self,
        workspace: Workspace,
        capabilities: CapabilityTokens,
        author: tuple[str, str] = ("Lancelot", "lancelot@localhost"),
    ) -> None:
        self._ws = workspace
        self._capabilities = capabilities
        self._author = author

    async def run(self, action: ToolAction, capability: str | None) -> ToolResult:
        """Run one repository action after checking its capability token."""
        self._capabilities.check(capability, action.digest)
        if action.capability not in CAPABILITIES:
            raise ToolFailed(f"RepoOps does not serve {action.capability}")
        repo = self._repo(action.params)
        self._refuse_paths_out(repo)
        await self._refuse_risky_config(repo)
        op = action.capability.removeprefix("repo.")
        result: ToolResult = await getattr(self, f"_{op}")(repo, action.params)
        return result

    def _repo(self, params: dict[str, Any]) -> Path:
        repo = self._ws.resolve(text_param(params, "path", "/workspace"))
        git_dir = repo / ".git"
        if git_dir.is_symlink() or not git_dir.is_dir():
            raise ToolFailed(f"{self._ws.display(repo)} is not a git repository")
        return repo

    def _refuse_paths_out(self, repo: Path) -> None:
        """Refuse a repository whose own files send git elsewhere: a commondir or an
        alternates file (another repository's refs and objects, read on the host), or a
        part of .git that resolves outside the workspace (a symlinked objects folder)."""
        git_dir = repo / ".git"
        for name in POINTERS:
            if (git_dir / name).exists() or (git_dir / name).is_symlink():
                raise PolicyDenied(
                    "repo-points-outside",
                    (f"Remove .git/{name} by hand if you meant it, then try again.",),
                    message=f"the repository's .git/{name} would make git read another one",
                )
        root = self._ws.root.resolve()
        parts = [*git_dir.iterdir(), *_entries(git_dir / "objects"), *_tree(git_dir / "refs")]
        for part in parts:
            if not part.resolve().is_relative_to(root):
                shown = part.relative_to(git_dir)
                raise PolicyDenied(
                    "repo-points-outside",
                    ("Keep the repository's .git folder inside the workspace.",),
                    message=f"the repository's .git/{shown} leads outside the workspace",
                )

    async def _refuse_risky_config(self, repo: Path) -> None:
        config = repo / ".git" / "config"
        if not config.is_file():
            return
        argv = ("config", "--file", str(config), "--no-includes", "--name-only", "--list")
        code, out = await self._git(repo, *argv)
        if code != 0:
            raise ToolFailed("the repository's config cannot be read")
        risky = sorted(
            {name for name in out.split() for p in RISKY_CONFIG if fnmatch.fnmatchcase(name, p)}
        )
        if risky:
            raise PolicyDenied(
                "repo-config-runs-programs",
                ("Remove those settings from .git/config by hand, then try again.",),
                message=f"the repository's config would make git run programs: {risky}",
            )

    def _env(self, repo: Path) -> dict[str, str]:
        """Only what git needs: none of Lancelot's own environment (tokens, keys) leaks in."""
        name, email = self._author
        return {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "LANG": "C.UTF-8",
            "HOME": str(self._ws.root),
            "GIT_DIR": str(repo / ".git"),
            "GIT_COMMON_DIR": str(repo / ".git"),  # never a commondir's other repository
            "GIT_WORK_TREE": str(repo),
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_CONFIG_GLOBAL": os.devnull,
            "GIT_TERMINAL_PROMPT": "0",
            "GIT_AUTHOR_NAME": name,
            "GIT_AUTHOR_EMAIL": email,
            "GIT_COMMITTER_NAME": name,
            "GIT_COMMITTER_EMAIL": email,
        }

    async def _git(self, repo: Path, *args: str, stdin: str | None = None) -> tuple[int, str]:
        """Exit code and combined output of one git command; killed after TIMEOUT."""
        process = await asyncio.create_subprocess_exec(
            "git",
            *OVERRIDES,
            *args,
            cwd=repo,
            env=self._env(repo),
            stdin=asyncio.subprocess.PIPE if stdin is not None else asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
        )
        try:
            async with asyncio.timeout(TIMEOUT):
                out, _ = await process.communicate(stdin.encode() if stdin is not None else None)
        except TimeoutError:
            raise ToolFailed(f"git {args[0]} took longer than {TIMEOUT:g} s") from None
        finally:
            if process.returncode is None:  # timed out or cancelled: never leave it running
                process.kill()
                await process.wait()
        assert process.returncode is not None
        return process.returncode, out.decode("utf-8", errors="replace")

    async def _result(self, repo: Path, *args: str) -> ToolResult:
        code, out = await self._git(repo, *args)
        text, cut = bounded(out)
        return ToolResult(code, text, cut)

    async def _status(self, repo: Path, params: dict[str, Any]) -> ToolResult:
        return await self._result(repo, "status", "--short", "--branch")

    async def _diff(self, repo: Path, params: dict[str, Any]) -> ToolResult:
        staged = ("--cached",) if params.get("staged") else ()
        return await self._result(repo, "diff", "--no-ext-diff", "--no-textconv", *staged)

    async def _apply_patch(self, repo: Path, params: dict[str, Any]) -> ToolResult:
        """`git apply --check`, then `git apply`; every path it touches passes the guard."""
        patch = text_param(params, "patch")
        code, listing = await self._git(repo, "apply", "--numstat", "-z", "-", stdin=patch)
        if code != 0:
            return ToolResult(code, f"not a usable patch:\n{bounded(listing)[0]}")
        inside = repo.relative_to(self._ws.root)
        touched = [self._ws.resolve((inside / n).as_posix()) for n in _numstat_paths(listing)]
        code, out = await self._git(repo, "apply", "--check", "-", stdin=patch)
        if code != 0:
            return ToolResult(code, f"the patch does not apply:\n{bounded(out)[0]}")
        code, out = await self._git(repo, "apply", "-", stdin=patch)
        changes = {}
        for path in touched:
            changes[self._ws.display(path)] = await asyncio.to_thread(file_digest, path)
        summary = "\n".join(f"{name}: {sha or 'removed'}" for name, sha in changes.items())
        text, cut = bounded(f"{out}applied to {len(changes)} file(s)\n{summary}")
        return ToolResult(code, text, cut, file_changes=changes if code == 0 else {})

    async def _commit(self, repo: Path, params: dict[str, Any]) -> ToolResult:
        message = text_param(params, "message").strip()
        if not message:
            raise ToolFailed("a commit needs a message")
        if params.get("all", True):
            code, out = await self._git(repo, "add", "--all")
            if code != 0:
                return ToolResult(code, bounded(out)[0])
        return await self._result(repo, "commit", "--no-verify", "--message", message)

    async def _branch(self, repo: Path, params: dict[str, Any]) -> ToolResult:
        name = await self._branch_name(repo, text_param(params, "name"))
        start = text_param(params, "start", "HEAD")
        if start.startswith("-"):
            raise ToolFailed(f"{start!r} is not a revision")
        return await self._result(repo, "branch", name, start)

    async def _checkout(self, repo: Path, params: dict[str, Any]) -> ToolResult:
        name = await self._branch_name(repo, text_param(params, "ref"))
        create = ("--create",) if params.get("create") else ()
        return await self._result(repo, "switch", *create, name)

    async def _branch_name(self, repo: Path, name: str) -> str:
        code, _ = await self._git(repo, "check-ref-format", "--branch", name)
        if code != 0 or name.startswith("-"):
            raise ToolFailed(f"{name!r} is not a valid branch name")
        return name


def _entries(folder: Path) -> list[Path]:
    """A folder's entries (none when it is missing or not a folder)."""
    return list(folder.iterdir()) if folder.is_dir() and not folder.is_symlink() else []


def _tree(folder: Path) -> list[Path]:
    """Everything under a small folder (refs/), without following symlinked folders."""
    found: list[Path] = []
    for top, dirs, files in os.walk(folder):
        found.extend(Path(top, name) for name in (*dirs, *files))
    return found


def _numstat_paths(listing: str) -> list[str]:
    """Paths from `git apply --numstat -z`: `a\\td\\tpath\\0`, or for a rename
    `a\\td\\t\\0old\\0new\\0`."""
    fields = listing.split("\0")
    paths: list[str] = []
    i = 0
    while i < len(fields) and fields[i]:
        _, _, path = fields[i].split("\t", 2)
        if path:
            paths.append(path)
            i += 1
        else:
            paths += fields[i + 1 : i + 3]
            i += 3
    return paths
