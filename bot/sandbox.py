"""Wires the shell providers into the tool router: the Docker sandbox (warm pool), the host."""

from __future__ import annotations

import sys

from bot.kernel import Kernel
from bot.tools import HOST_SHELL_PRIORITY, SANDBOX_PRIORITY, SHELL
from core.config import Settings
from core.tools.capability import CapabilityTokens
from core.tools.router import ToolRouter
from core.tools.sandbox import DockerEngine, DockerSandbox, HostShell, SandboxLimits
from core.tools.workspace import Workspace


def sandbox_limits(settings: Settings) -> SandboxLimits:
    """The sandbox's limits from the settings."""
    conf = settings.sandbox
    return SandboxLimits(
        image=conf.image,
        pool_size=conf.pool_size,
        timeout_seconds=conf.timeout_seconds,
        memory_mb=conf.memory_mb,
        cpus=conf.cpus,
        pids=conf.pids,
        tmpfs_mb=conf.tmpfs_mb,
    )


async def add_shell_providers(
    app: Kernel, router: ToolRouter, workspace: Workspace, capabilities: CapabilityTokens
) -> DockerSandbox:
    """Register the Docker sandbox (above SafeREPL) and the host shell (between them, only
    with FEATURE_TOOLS_HOST_EXECUTION) for shell.exec; start the sandbox on `app.stack` and
    report it to health.

    The pool warms in the background at startup (or at the first command when
    `sandbox.warm_at_start` is off); a down engine never stops startup.
    """
    limits = sandbox_limits(app.settings)
    sandbox = DockerSandbox(DockerEngine(), workspace, capabilities, limits)
    await app.stack.enter_async_context(sandbox)
    if app.settings.sandbox.warm_at_start:
        sandbox.warm()

    async def check() -> str | None:
        reason = await sandbox.unavailable()
        return f"sandbox: {reason}" if reason else None

    app.health.register("sandbox", check)
    router.register(sandbox, SHELL, priority=SANDBOX_PRIORITY, health=sandbox.health, local=True)
    host = HostShell(workspace, capabilities, app.features, limits.timeout_seconds)
    router.register(host, SHELL, priority=HOST_SHELL_PRIORITY, health=host.health)
    return sandbox


def build_image(settings: Settings, *, force: bool, mirror: str | None) -> int:
    """`lancelot sandbox build`: build the image if missing; print what happened; exit code."""
    from core.errors import ToolFailed, ToolUnavailable
    from core.tools.sandbox.image import build, exists

    image = settings.sandbox.image
    engine = DockerEngine()
    try:
        if force or not exists(engine, image):
            print(f"building {image} from Debian packages (a few minutes)...", file=sys.stderr)
        report = build(engine, image, mirror=mirror or settings.sandbox.mirror, force=force)
    except (ToolFailed, ToolUnavailable) as exc:
        print(f"lancelot: sandbox build failed: {exc}", file=sys.stderr)
        return 1
    finally:
        engine.close()
    if report.skipped:
        print(f"{image} already exists (use --force to rebuild)")
    else:
        print(f"built {image} in {report.seconds:.0f} s")
    return 0
