"""Wires the shell providers into the tool router: the Docker sandbox (warm pool), the host."""

from __future__ import annotations

import sys
from dataclasses import dataclass

from bot.kernel import Kernel
from bot.tools import HOST_SHELL_PRIORITY, SANDBOX_PRIORITY, SHELL
from core.config import Settings
from core.tools.capability import CapabilityTokens
from core.tools.effects import EffectSettings, ShellEffects
from core.tools.effects.provider import APPLY, EffectApplier, SandboxDryRuns
from core.tools.router import ToolRouter
from core.tools.sandbox import DockerEngine, DockerSandbox, HostShell, SandboxLimits
from core.tools.workspace import Workspace

DAY = 86400.0


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


@dataclass(frozen=True, slots=True)
class ShellKit:
    """The shell's providers as governance needs them: dry runs and applied changes."""

    sandbox: DockerSandbox
    effects: ShellEffects
    dry_runs: SandboxDryRuns


def effect_settings(settings: Settings) -> EffectSettings:
    """The effect engine's bounds from the settings (a dry run waits as long as an approval
    can: the Soul's timeout is at most a day)."""
    conf = settings.sandbox
    return EffectSettings(
        pool_size=conf.dry_run_pool,
        dry_run_ttl_seconds=DAY,
        undo_window_seconds=conf.undo_hours * 3600,
        backup_max_bytes=conf.undo_max_mb << 20,
        backup_max_age_seconds=conf.undo_max_days * DAY,
    )


async def open_effects(
    app: Kernel, workspace: Workspace, capabilities: CapabilityTokens
) -> ShellEffects:
    """The effect engine (dry runs, applied changes and their backups), on `app.stack`: the
    shell's dry runs and the file tools' writes go through it, so /undo covers both."""
    effects = ShellEffects(
        DockerEngine(),
        workspace,
        app.home,
        capabilities,
        sandbox_limits(app.settings),
        effect_settings(app.settings),
    )
    await app.stack.enter_async_context(effects)
    return effects


async def add_shell_providers(
    app: Kernel,
    router: ToolRouter,
    workspace: Workspace,
    capabilities: CapabilityTokens,
    effects: ShellEffects,
) -> ShellKit:
    """Register the Docker sandbox (above SafeREPL) and the host shell (between them, only
    with FEATURE_TOOLS_HOST_EXECUTION) for shell.exec, and the effect engine's apply for
    shell.apply; start them on `app.stack` and report the sandbox to health.

    The pools warm in the background at startup (or at the first command when
    `sandbox.warm_at_start` is off); a down engine never stops startup.
    """
    limits = sandbox_limits(app.settings)
    sandbox = DockerSandbox(
        effects.engine, workspace, capabilities, limits, masks_home=app.home / "masks"
    )
    await app.stack.enter_async_context(sandbox)
    if app.settings.sandbox.warm_at_start:
        sandbox.warm()
        app.tasks.spawn(effects.warm(), name="dry-run-warm", report=False)

    async def check() -> str | None:
        reason = await sandbox.unavailable()
        return f"sandbox: {reason}" if reason else None

    app.health.register("sandbox", check, optional=True)  # /run falls back to SafeREPL
    router.register(sandbox, SHELL, priority=SANDBOX_PRIORITY, health=sandbox.health, local=True)
    host = HostShell(workspace, capabilities, app.features, limits.timeout_seconds)
    router.register(host, SHELL, priority=HOST_SHELL_PRIORITY, health=host.health)
    # Applying a kept dry run is local file work: it needs no engine.
    router.register(EffectApplier(effects, capabilities), (APPLY,), local=True)
    return ShellKit(sandbox, effects, SandboxDryRuns(effects, sandbox.unavailable))


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
