"""Dry runs against the real engine: each kind of change shows as the right effects, the
workspace itself is untouched, output and exit code come from the dry run."""

from __future__ import annotations

import asyncio
import re
import time
from pathlib import Path
from typing import Any

import pytest

from core.errors import PolicyDenied
from core.tools.action import ToolAction
from core.tools.capability import CapabilityTokens
from core.tools.effects import EffectSettings, ShellEffects
from core.tools.sandbox import DockerEngine, SandboxLimits
from core.tools.sandbox.output import CEILING
from core.tools.workspace import Workspace
from tests.core.tools.effects.support import dry_run, kinds, make, snapshot
from tests.core.tools.sandbox.support import inspect

BASE = {
    "a.txt": "alpha",
    "notes.md": "x" * 2150,
    "b/one": "1",
    "b/two": "2",
    "c.log": "log",
    "d/keep": "k",
    "run.sh": "#!/bin/sh\n",
}

CASES = [
    ("echo hi > new.txt", {"new.txt": "created"}),
    ("echo changed > a.txt", {"a.txt": "modified"}),
    (": > notes.md", {"notes.md": "modified"}),
    ("rm a.txt", {"a.txt": "deleted"}),
    ("mv a.txt z.txt", {"a.txt": "deleted", "z.txt": "created"}),
    ("chmod 755 run.sh", {"run.sh": "mode_changed"}),
    ("ln -s /etc/passwd pw", {"pw": "created"}),
    ("mkdir -p e/f", {"e": "created", "e/f": "created"}),
    ("rm -r b", {"b": "deleted", "b/one": "deleted", "b/two": "deleted"}),
    # b removed then made again: an opaque directory hides what the workspace had in it
    (
        "rm -rf b && mkdir b && echo 3 > b/three",
        {"b/one": "deleted", "b/two": "deleted", "b/three": "created"},
    ),
    (
        "mv b b2",
        {
            "b": "deleted",
            "b/one": "deleted",
            "b/two": "deleted",
            "b2": "created",
            "b2/one": "created",
            "b2/two": "created",
        },
    ),
    ("rm a.txt && mkdir a.txt", {"a.txt": "replaced"}),
    ("rm -r d && echo x > d", {"d": "replaced", "d/keep": "deleted"}),
    ("rm a.txt && ln -s notes.md a.txt", {"a.txt": "replaced"}),
    ("touch a.txt && cat a.txt", {}),
    ("ls -la && cat notes.md > /dev/null", {}),
    ("python3 -c \"import os; os.remove('c.log')\"", {"c.log": "deleted"}),
    ("$(echo rm) -rf d", {"d": "deleted", "d/keep": "deleted"}),
    ("c=rm; $c -f a.txt c.log", {"a.txt": "deleted", "c.log": "deleted"}),
    ("sed -i d notes.md", {"notes.md": "modified"}),
    ("cp /dev/null run.sh", {"run.sh": "modified"}),
    ("echo tmp > t && rm t", {}),
]


@pytest.mark.parametrize(("command", "expected"), CASES, ids=[c for c, _ in CASES])
async def test_each_change_shows_as_its_effects_and_the_workspace_is_untouched(
    effects: ShellEffects,
    capabilities: CapabilityTokens,
    workspace: Workspace,
    command: str,
    expected: dict[str, str],
) -> None:
    make(workspace.root, BASE)
    before = snapshot(workspace.root)
    run = await dry_run(effects, capabilities, command)
    assert run.result.exit_code == 0, run.result.output
    assert kinds(run) == expected
    assert run.state == ("unchanged" if not expected else "pending")
    assert snapshot(workspace.root) == before


async def test_the_effects_record_sizes_hashes_modes_and_targets(
    effects: ShellEffects, capabilities: CapabilityTokens, workspace: Workspace
) -> None:
    make(workspace.root, BASE)
    run = await dry_run(
        effects, capabilities, ": > notes.md; chmod 700 run.sh; ln -s ../x link; echo hi > n"
    )
    by_path = {effect.path: effect for effect in run.effects.effects}
    notes = by_path["notes.md"]
    assert (notes.before.size, notes.after.size) == (2150, 0)
    assert notes.before.sha256 is not None
    assert notes.before.mtime_ns > 0
    assert notes.after.sha256 == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
    assert (by_path["run.sh"].before.mode, by_path["run.sh"].after.mode) == (0o644, 0o700)
    assert by_path["link"].after.kind == "symlink"
    assert by_path["link"].after.target == "../x"
    assert by_path["n"].after.size == 3
    assert run.effects.categories()["symlinks"] == ("link",)


async def test_the_summary_speaks_of_files_and_sizes(
    effects: ShellEffects, capabilities: CapabilityTokens, workspace: Workspace
) -> None:
    make(workspace.root, BASE)
    run = await dry_run(effects, capabilities, "rm a.txt c.log && rm -r b && : > notes.md")
    assert run.effects.summary == (
        "deletes 2 files and 1 folder: a.txt, b/ (2 files), c.log;"
        " overwrites notes.md (2.1 KB → 0 B)"
    )
    assert run.effects.categories() == {
        "overwrites": ("notes.md",),
        "deletes": ("a.txt", "b", "b/one", "b/two", "c.log"),
    }


async def test_output_stderr_and_exit_code_come_from_the_dry_run(
    effects: ShellEffects, capabilities: CapabilityTokens, workspace: Workspace
) -> None:
    run = await dry_run(effects, capabilities, "echo out; echo err >&2; echo x > f; exit 3")
    assert run.result.exit_code == 3
    # Both streams, in whatever order the engine delivered them (they are separate pipes).
    assert sorted(run.result.output.splitlines()) == ["err", "out"]
    assert [e.path for e in run.effects.effects] == ["f"]
    assert not (workspace.root / "f").exists()


async def test_a_command_past_its_time_is_killed_and_what_it_wrote_is_still_shown(
    workspace: Workspace, home: Path, capabilities: CapabilityTokens, docker_image: str
) -> None:
    limits = SandboxLimits(image=docker_image, timeout_seconds=1.0)
    async with ShellEffects(
        DockerEngine(), workspace, home, capabilities, limits, EffectSettings(pool_size=1)
    ) as engine:
        # What it would write at 5 s never comes: its container died at the limit.
        command = "echo started > s; (sleep 5; echo late > late) & sleep 30"
        run = await dry_run(engine, capabilities, command)
    assert run.result.exit_code == 124
    assert "killed: still running after 1 s" in run.result.output
    assert kinds(run) == {"s": "created"}


async def test_a_command_flooding_its_output_is_killed_and_its_start_still_shown(
    workspace: Workspace, home: Path, capabilities: CapabilityTokens, docker_image: str
) -> None:
    limits = SandboxLimits(image=docker_image, timeout_seconds=60.0)
    async with ShellEffects(
        DockerEngine(), workspace, home, capabilities, limits, EffectSettings(pool_size=1)
    ) as engine:
        # Bounded (the engine's log keeps a container's output too: an endless flood that
        # was not stopped would fill its disk), yet past the ceiling; then it would wait.
        command = f"echo first; echo x > s; head -c {CEILING + (1 << 20)} /dev/zero; sleep 60"
        started = time.monotonic()
        run = await dry_run(engine, capabilities, command)
    assert time.monotonic() - started < 30  # stopped at the flood, not at its time limit
    assert run.result.exit_code == 124
    assert run.result.truncated
    assert run.result.output.startswith("first\n\0\0")
    tail = run.result.output.rsplit("\n", 1)[-1]
    assert re.fullmatch(r"\[killed: output passed [\d,]+ bytes\]", tail), tail
    passed = int(tail.split()[3].replace(",", ""))
    assert passed > CEILING
    assert kinds(run) == {"s": "created"}


async def test_processes_left_running_die_with_the_command(
    effects: ShellEffects, capabilities: CapabilityTokens, home: Path
) -> None:
    run = await dry_run(effects, capabilities, "(sleep 1; echo late > late) & echo now > now")
    assert kinds(run) == {"now": "created"}
    await asyncio.sleep(1.5)
    assert sorted(p.name for p in (home / "dryruns" / run.id / "upper").iterdir()) == ["now"]


async def test_nothing_runs_without_the_policy_engines_token(
    effects: ShellEffects, workspace: Workspace
) -> None:
    action = ToolAction("shell.exec", "touch ran")
    forged = CapabilityTokens(b"someone else").issue(action.digest)
    with pytest.raises(PolicyDenied):
        await effects.dry_run(action, forged)
    assert effects.pool.factory.launched == []


async def test_every_dry_run_container_is_hardened(
    effects: ShellEffects, capabilities: CapabilityTokens
) -> None:
    await dry_run(effects, capabilities, "true")
    containers = list(effects.pool.factory.launched)
    assert containers
    for container in containers:
        info: dict[str, Any] | None = await inspect(container)
        if info is None:
            continue  # used and already removed
        host = info["HostConfig"]
        assert host["NetworkMode"] == "none"
        assert host["ReadonlyRootfs"] is True
        assert host["CapDrop"] == ["ALL"]
        assert host["SecurityOpt"] == ["no-new-privileges"]
        assert host["PidsLimit"] == 128
        assert info["Config"]["User"] not in ("", "0", "root", "0:0")
        [mount] = info["Mounts"]
        assert (mount["Type"], mount["Destination"], mount["Driver"]) == (
            "volume",
            "/workspace",
            "local",
        )
