"""The shell providers: hardened Docker containers in a warm pool, and the host shell."""

from core.tools.sandbox.docker_sandbox import DockerSandbox
from core.tools.sandbox.engine import DockerEngine, SandboxUnavailable
from core.tools.sandbox.host import HostShell
from core.tools.sandbox.limits import SandboxLimits

__all__ = [
    "DockerEngine",
    "DockerSandbox",
    "HostShell",
    "SandboxLimits",
    "SandboxUnavailable",
]
