"""The shell sandbox: hardened Docker containers in a warm pool, the host shell, the choice."""

from core.tools.sandbox.docker_sandbox import DockerSandbox
from core.tools.sandbox.engine import DockerEngine, SandboxUnavailable
from core.tools.sandbox.host import HostShell
from core.tools.sandbox.limits import SandboxLimits
from core.tools.sandbox.selector import ShellRunner

__all__ = [
    "DockerEngine",
    "DockerSandbox",
    "HostShell",
    "SandboxLimits",
    "SandboxUnavailable",
    "ShellRunner",
]
