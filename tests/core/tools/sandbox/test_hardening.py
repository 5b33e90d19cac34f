"""Inside the real sandbox: what a command can and cannot do, and what `docker inspect` shows."""

from __future__ import annotations

import time
from typing import Any

from core.tools.base import MAX_OUTPUT
from core.tools.capability import CapabilityTokens
from core.tools.sandbox import DockerSandbox, SandboxLimits
from core.tools.workspace import Workspace
from tests.core.tools.sandbox.support import inspect, run


async def test_every_launched_container_is_hardened(
    sandbox: DockerSandbox, capabilities: CapabilityTokens, workspace: Workspace
) -> None:
    inspected: dict[str, dict[str, Any]] = {}

    async def inspect_new() -> None:
        for container in sandbox.pool.launched:
            if container not in inspected:
                info = await inspect(container)
                assert info is not None
                inspected[container] = info

    await run(sandbox, capabilities, "true")
    await inspect_new()
    await run(sandbox, capabilities, "sleep 30")  # times out: its container is replaced
    await run(sandbox, capabilities, "true")
    await inspect_new()
    assert len(inspected) == len(sandbox.pool.launched) >= sandbox.limits.pool_size + 1
    for info in inspected.values():
        assert_hardened(info, sandbox.limits, workspace)


def assert_hardened(info: dict[str, Any], limits: SandboxLimits, workspace: Workspace) -> None:
    host = info["HostConfig"]
    assert host["NetworkMode"] == "none"
    assert host["ReadonlyRootfs"] is True
    assert host["CapDrop"] == ["ALL"]
    assert any(opt.startswith("no-new-privileges") for opt in host["SecurityOpt"])
    user = info["Config"]["User"].split(":")[0]
    assert int(user or "0") != 0
    assert host["PidsLimit"] == limits.pids
    assert host["Memory"] == limits.memory_mb * 1024 * 1024
    assert host["NanoCpus"] == int(limits.cpus * 1e9)
    assert {u["Name"] for u in host["Ulimits"]} == {"nofile", "nproc", "fsize"}
    assert "/tmp" in host["Tmpfs"]
    mounts = [(m["Type"], m["Source"], m["Destination"], m["RW"]) for m in info["Mounts"]]
    assert mounts == [("bind", str(workspace.root), "/workspace", True)]
    assert info["Config"]["WorkingDir"] == "/workspace"


async def test_no_network_inside(sandbox: DockerSandbox, capabilities: CapabilityTokens) -> None:
    interfaces = await run(sandbox, capabilities, "ls /sys/class/net")
    assert interfaces.output.split() == ["lo"]
    # 192.0.2.1 is a documentation address (RFC 5737): never routed, even if this broke.
    probe = await run(
        sandbox,
        capabilities,
        "python3 -c \"import socket; socket.create_connection(('192.0.2.1', 80), timeout=2)\"",
    )
    assert probe.exit_code != 0
    assert "Network is unreachable" in probe.output


async def test_writes_outside_the_workspace_fail_and_inside_reach_the_host(
    sandbox: DockerSandbox, capabilities: CapabilityTokens, workspace: Workspace
) -> None:
    for target in ("/etc/owned", "/owned", "/usr/bin/owned"):
        result = await run(sandbox, capabilities, f"echo x > {target}")
        assert result.exit_code != 0
        assert "Read-only file system" in result.output
    result = await run(sandbox, capabilities, "echo made in the sandbox > /workspace/out.txt")
    assert result.exit_code == 0
    assert (workspace.root / "out.txt").read_text() == "made in the sandbox\n"


async def test_no_new_privileges_no_capabilities_not_root(
    sandbox: DockerSandbox, capabilities: CapabilityTokens
) -> None:
    status = await run(sandbox, capabilities, "grep -E 'NoNewPrivs|CapEff' /proc/self/status")
    assert "NoNewPrivs:\t1" in status.output
    assert "CapEff:\t0000000000000000" in status.output
    uid = await run(sandbox, capabilities, "id -u")
    assert int(uid.output) != 0


async def test_fork_bomb_ends_within_the_limits_and_the_pool_recovers(
    sandbox: DockerSandbox, capabilities: CapabilityTokens, limits: SandboxLimits
) -> None:
    started = time.monotonic()
    bomb = await run(sandbox, capabilities, "bomb() { bomb | bomb; }; bomb")
    assert time.monotonic() - started < limits.timeout_seconds + 15
    assert bomb.exit_code != 0
    after = await run(sandbox, capabilities, "echo still here; ps -e --no-headers | wc -l")
    lines = after.output.split()
    assert lines[:2] == ["still", "here"]
    assert int(lines[2]) < 10  # a fresh or cleaned container: init, the idle process, ps


async def test_a_command_past_its_timeout_is_killed_and_reported(
    sandbox: DockerSandbox, capabilities: CapabilityTokens, limits: SandboxLimits
) -> None:
    started = time.monotonic()
    result = await run(sandbox, capabilities, "echo begun; sleep 60")
    elapsed = time.monotonic() - started
    assert limits.timeout_seconds <= elapsed < limits.timeout_seconds + 10
    assert result.exit_code == 124
    assert "begun" in result.output
    assert f"killed: still running after {limits.timeout_seconds:g} s" in result.output
    assert (await run(sandbox, capabilities, "echo next")).output == "next\n"


async def test_huge_output_is_bounded(
    sandbox: DockerSandbox, capabilities: CapabilityTokens
) -> None:
    result = await run(sandbox, capabilities, "seq 1 2000000; echo the end")
    assert result.exit_code == 0
    assert result.truncated
    assert len(result.output) <= MAX_OUTPUT + 100
    assert result.output.startswith("1\n2\n3\n")
    assert result.output.rstrip().endswith("the end")


async def test_exit_codes_and_stderr_come_back(
    sandbox: DockerSandbox, capabilities: CapabilityTokens
) -> None:
    assert (await run(sandbox, capabilities, "exit 7")).exit_code == 7
    failed = await run(sandbox, capabilities, "ls /nowhere")
    assert failed.exit_code == 2
    assert "No such file or directory" in failed.output
    assert (await run(sandbox, capabilities, "true")).exit_code == 0


async def test_background_leftovers_do_not_survive_into_the_next_command(
    sandbox: DockerSandbox, capabilities: CapabilityTokens
) -> None:
    await run(sandbox, capabilities, "sleep 600 >/dev/null 2>&1 &")
    for _ in range(3):  # whichever warm container answers, no stray sleep 600 is left in it
        left = await run(sandbox, capabilities, "ps -eo args --no-headers")
        assert "sleep 600" not in left.output
