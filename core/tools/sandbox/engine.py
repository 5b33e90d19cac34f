"""The Docker engine connection: made on demand, remade after a failure, errors in plain words."""

from __future__ import annotations

import logging
import os
import socket
import threading
from typing import Any

from core.errors import ToolUnavailable

log = logging.getLogger(__name__)

BUILD_HINT = "run `lancelot sandbox build`"
# Docker 20.10's API: everything used here exists in it, and newer engines still accept it.
# A fixed version also means building the client does not already talk to the engine.
API_VERSION = "1.41"


class SandboxUnavailable(ToolUnavailable):
    """The sandbox cannot run commands right now (the engine is down, the image is missing);
    nothing ran, so the router may hand the command to another provider."""

    def __init__(self, message: str) -> None:
        super().__init__(message, user_message=message)


def _where() -> str:
    return os.environ.get("DOCKER_HOST") or "unix:///var/run/docker.sock"


def _unreachable() -> SandboxUnavailable:
    return SandboxUnavailable(
        f"the sandbox engine is not reachable: no Docker engine answers at {_where()}"
    )


def _probe_socket() -> None:
    """For a unix socket, check it accepts a connection first: the SDK leaks the socket of a
    failed connect."""
    where = _where()
    if not where.startswith("unix://"):
        return
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
        probe.settimeout(2.0)
        try:
            probe.connect(where.removeprefix("unix://"))
        except OSError:
            raise _unreachable() from None


class DockerEngine:
    """A docker SDK client, connected lazily. Every method blocks: call it in a thread."""

    def __init__(self, timeout: float = 10.0) -> None:
        self._timeout = timeout
        self._client: Any = None
        self._lock = threading.Lock()

    @property
    def api(self) -> Any:
        """The low-level APIClient (connects on first use); SandboxUnavailable if it cannot."""
        return self.client().api

    def client(self) -> Any:
        """The DockerClient, connecting first if needed."""
        with self._lock:
            if self._client is None:
                self._client = self._connect()
            return self._client

    def _connect(self) -> Any:
        _probe_socket()  # first: with no engine there, the SDK (about 18 MB) is never loaded
        import docker
        from docker.errors import DockerException

        try:  # a DOCKER_HOST or TLS setting the SDK cannot use: as unreachable as a down one
            client = docker.from_env(version=API_VERSION, timeout=int(self._timeout))
        except DockerException as exc:
            log.info("docker engine at %s unusable: %s", _where(), exc)
            raise _unreachable() from None
        try:
            client.ping()
        except (DockerException, OSError) as exc:
            client.close()
            log.info("docker engine at %s unreachable: %s", _where(), exc)
            raise _unreachable() from None
        return client

    def reset(self) -> None:
        """Forget the connection (after an error), so the next call reconnects."""
        with self._lock:
            client, self._client = self._client, None
        if client is not None:
            client.close()

    def ping(self) -> None:
        """Check the engine answers now; SandboxUnavailable otherwise."""
        client = self.client()  # SandboxUnavailable before the SDK loads when no engine answers
        from docker.errors import DockerException

        try:
            client.ping()
        except (DockerException, OSError):
            self.reset()
            self.client()  # reconnect once; raises SandboxUnavailable if still down

    def require_image(self, image: str) -> None:
        """SandboxUnavailable (with the build hint) unless `image` exists locally."""
        api = self.api  # SandboxUnavailable before the SDK loads when no engine answers
        from docker.errors import DockerException, ImageNotFound

        try:
            api.inspect_image(image)
        except ImageNotFound:
            raise SandboxUnavailable(
                f"the sandbox image {image} is missing; {BUILD_HINT}"
            ) from None
        except (DockerException, OSError):
            self.reset()
            raise _unreachable() from None

    def usable(self, image: str) -> str | None:
        """None when commands can run; otherwise the short reason why not."""
        try:
            self.ping()
            self.require_image(image)
        except SandboxUnavailable as exc:
            return str(exc)
        return None

    def close(self) -> None:
        """Drop the connection."""
        self.reset()
