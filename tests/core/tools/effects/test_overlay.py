"""Overlay slots: their mount options and the xattrs a Lancelot that is not root reads (no
engine); on the real engine, an opaque folder, a slot that cannot start, what used and
waiting slots leave behind, the sweep after a crash and the connection let go."""

from __future__ import annotations

import asyncio
import contextlib
import io
import os
import socket
import stat
from pathlib import Path

import docker
import pytest

from core.tools.capability import CapabilityTokens
from core.tools.effects import EffectSettings, ShellEffects
from core.tools.effects.command import run_in_slot
from core.tools.effects.overlay import SlotFactory, labels, mount_options, raw_socket
from core.tools.effects.scan import scan_upper
from core.tools.sandbox import DockerEngine, SandboxLimits, SandboxUnavailable
from core.tools.workspace import Workspace
from tests.core.tools.effects.support import NOBODY, as_user, dry_run, make, shared_folder
from tests.core.tools.sandbox.support import inspect


def test_the_mount_options_name_the_three_layers_and_keep_the_upper_layer_plain(
    tmp_path: Path,
) -> None:
    options = mount_options(tmp_path / "ws", tmp_path / "run", userxattr=False)
    assert options.split(",") == [
        f"lowerdir={tmp_path / 'ws'}",
        f"upperdir={tmp_path / 'run' / 'upper'}",
        f"workdir={tmp_path / 'run' / 'work'}",
        "redirect_dir=nofollow",
        "index=off",
        "metacopy=off",
    ]


@pytest.mark.parametrize("name", ["a,b", "a:b", "a\\b"])
def test_a_data_directory_a_mount_option_cannot_carry_is_refused_by_name(
    tmp_path: Path, name: str
) -> None:
    with pytest.raises(SandboxUnavailable, match="without ',' ':' or '\\\\'") as refused:
        mount_options(tmp_path / "ws", tmp_path / name, userxattr=False)
    assert str(tmp_path / name / "upper") in str(refused.value)


@pytest.mark.parametrize("uid", [1, NOBODY])
def test_a_lancelot_that_is_not_root_reads_opaque_folders_from_user_xattrs(uid: int) -> None:
    # Only root may read trusted.* xattrs: any other user, down to uid 1, mounts with
    # userxattr and reads user.overlay.* (the mount itself is the engine's, as root).
    def made_as_that_user(home: Path) -> str:
        factory = SlotFactory(DockerEngine(), home / "ws", home / "runs", SandboxLimits())
        return f"{factory.userxattr} {factory.opaque_xattr}"

    with shared_folder() as home:
        assert as_user(uid, lambda: made_as_that_user(home)) == "True user.overlay.opaque"


async def test_a_folder_removed_and_made_again_hides_what_the_workspace_held(
    workspace: Workspace, home: Path, limits: SandboxLimits
) -> None:
    make(workspace.root, {"b/one": "1", "b/two": "2"})
    engine = DockerEngine()
    factory = SlotFactory(engine, workspace.root, home / "dryruns", limits)
    slot = await asyncio.to_thread(factory.create)
    try:
        result = await run_in_slot(engine, slot, "rm -rf b && mkdir b && echo 3 > b/three", 5)
        assert result.exit_code == 0, result.output
        found = scan_upper(slot.upper, workspace.root, factory.opaque_xattr)
        assert {e.path: e.kind for e in found.effects} == {
            "b/one": "deleted",
            "b/two": "deleted",
            "b/three": "created",
        }
    finally:
        await asyncio.to_thread(factory.remove, slot)
        engine.close()


async def test_a_slot_whose_overlay_cannot_be_mounted_leaves_nothing_behind(
    tmp_path: Path, docker_image: str
) -> None:
    lower = tmp_path / "not-a-folder"
    lower.write_text("an overlay's lower layer must be a folder")
    runs = tmp_path / "home" / "dryruns"
    engine = DockerEngine()
    factory = SlotFactory(engine, lower, runs, SandboxLimits(image=docker_image))
    try:
        with pytest.raises(docker.errors.APIError, match="failed to mount local volume"):
            await asyncio.to_thread(factory.create)
    finally:
        engine.close()
    [container] = factory.launched
    assert await inspect(container) is None
    assert await volumes_labelled(labels(lower)) == []
    assert list(runs.iterdir()) == []


async def test_used_and_waiting_slots_leave_only_a_kept_dry_runs_private_upper_layer(
    workspace: Workspace, home: Path, capabilities: CapabilityTokens, limits: SandboxLimits
) -> None:
    make(workspace.root, {"a.txt": "alpha"})
    workspace.root.chmod(0o751)
    async with ShellEffects(
        DockerEngine(), workspace, home, capabilities, limits, EffectSettings(pool_size=2)
    ) as effects:
        kept = await dry_run(effects, capabilities, "rm a.txt")
        unchanged = await dry_run(effects, capabilities, "stat -c %a .")
        launched = list(effects.pool.factory.launched)
    assert len(launched) >= 3  # two used, and at least one made to wait for the next
    assert [await inspect(container) for container in launched] == [None] * len(launched)
    assert await volumes_labelled(labels(workspace.root)) == []
    assert [p.name for p in (home / "dryruns").iterdir()] == [kept.id]
    assert [p.name for p in (home / "dryruns" / kept.id).iterdir()] == ["upper"]
    assert stat.S_IMODE((home / "dryruns" / kept.id).stat().st_mode) == 0o700
    assert (unchanged.state, unchanged.result.output) == ("unchanged", "751\n")


def test_a_sweep_takes_stopped_containers_and_keeps_its_mark_while_a_volume_is_held(
    tmp_path: Path, docker_image: str
) -> None:
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    engine = DockerEngine()
    factory = SlotFactory(
        engine, workspace, tmp_path / "dryruns", SandboxLimits(image=docker_image)
    )
    ours = labels(workspace)
    client = docker.from_env()
    volume = f"lancelot-dryrun-held-{os.getpid()}"
    holder = None
    try:
        factory.sweep()  # nothing left and no mark (the pool's first start): nothing to do
        assert not factory.mark.exists()
        stopped = client.api.create_container(docker_image, ["true"], labels=ours)["Id"]
        factory.mark.touch()
        factory.sweep()  # a container a crash left stopped: gone, and nothing else is left
        assert not any(c["Id"] == stopped for c in client.api.containers(all=True))
        assert not factory.mark.exists()
        client.api.create_volume(volume, labels=ours)
        held = client.api.create_host_config(binds={volume: {"bind": "/held", "mode": "rw"}})
        holder = client.api.create_container(docker_image, ["true"], host_config=held)["Id"]
        factory.mark.touch()
        factory.sweep()  # another container holds the volume: it stays, and so does the mark
        assert factory.mark.exists()
        client.api.remove_container(holder, force=True)
        holder = None
        factory.sweep()
        assert not factory.mark.exists()
        assert volume not in {v["Name"] for v in client.api.volumes()["Volumes"] or ()}
    finally:
        if holder is not None:
            client.api.remove_container(holder, force=True)
        with contextlib.suppress(docker.errors.NotFound):
            client.api.remove_volume(volume, force=True)
        client.close()
        engine.close()


def test_a_removed_slot_lets_go_of_its_engine_connection(tmp_path: Path, docker_image: str) -> None:
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    engine = DockerEngine()
    factory = SlotFactory(
        engine, workspace, tmp_path / "dryruns", SandboxLimits(image=docker_image)
    )
    try:
        slot = factory.create()
        connection = raw_socket(slot.stream)
        assert connection.fileno() >= 0
        factory.remove(slot)
        assert connection.fileno() == -1  # closed, not left to the collector
        factory.remove(slot)  # removing it again (a second close) is harmless
    finally:
        engine.close()


def test_a_connection_that_is_no_socket_cannot_take_a_command() -> None:
    with pytest.raises(SandboxUnavailable) as refused:
        raw_socket(io.BytesIO(b"an engine reached some other way"))
    assert str(refused.value) == "the sandbox engine connection cannot take a command"
    left, right = socket.socketpair()
    with left, right:
        assert raw_socket(socket.SocketIO(left, "rwb")) is left
        assert raw_socket(left) is left


async def volumes_labelled(wanted: dict[str, str]) -> list[str]:
    """The names of the engine's volumes that carry every one of `wanted`."""

    def names() -> list[str]:
        client = docker.from_env()
        try:
            found = client.api.volumes(filters={"label": [f"{k}={v}" for k, v in wanted.items()]})
            return [volume["Name"] for volume in (found or {}).get("Volumes") or ()]
        finally:
            client.close()

    return await asyncio.to_thread(names)
