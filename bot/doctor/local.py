"""Checks of this machine: LANCELOT_HOME, the Docker engine and image, the local model file,
the web port and the receipt ledger."""

from __future__ import annotations

import contextlib
import errno
import fcntl
import importlib.util
import os
import shutil
import socket
import tempfile
from pathlib import Path

from bot.doctor.report import Finding, failed, ok, skipped
from bot.home import LOCK_FILE
from bot.ledger import LEDGER_FILE
from core.config import Settings
from core.errors import StorageError, ToolUnavailable
from core.features import FeatureError, FeatureFlags

MB = 1024 * 1024


def _existing_ancestor(path: Path) -> Path:
    while not path.exists() and path != path.parent:
        path = path.parent
    return path


def _writable(directory: Path) -> str | None:
    """None if a file can be made in `directory`, else why not (nothing is left behind)."""
    try:
        with tempfile.NamedTemporaryFile(dir=directory, prefix=".doctor-"):
            return None
    except OSError as exc:
        return exc.strerror or str(exc)


def check_home(settings: Settings) -> list[Finding]:
    """LANCELOT_HOME can be written and has room (made on first run if missing)."""
    home = settings.home.expanduser().resolve()
    if home.exists() and not home.is_dir():
        return [failed("home", f"{home} is not a directory", "set LANCELOT_HOME to a directory")]
    where = home if home.exists() else _existing_ancestor(home)
    problem = _writable(where)
    if problem is not None:
        return [
            failed(
                "home",
                f"{where} is not writable ({problem})",
                f"give this user write access to {where}, or set LANCELOT_HOME elsewhere",
            )
        ]
    free = shutil.disk_usage(where).free // MB
    floor = settings.scheduler.disk_min_free_mb
    state = f"{home} writable" if where == home else f"{home} will be made in {where}"
    if free < floor:
        return [
            failed(
                "home",
                f"{state}, only {free:,} MB free (health wants {floor:,} MB)",
                "free some space, or set LANCELOT_HOME on a bigger disk",
            )
        ]
    return [ok("home", f"{state}, {free:,} MB free")]


def check_docker(settings: Settings, timeout: float) -> list[Finding]:
    """The engine answers and has the sandbox image (optional: /run falls back to SafeREPL)."""
    from core.tools.sandbox.engine import DockerEngine
    from core.tools.sandbox.image import exists

    image = settings.sandbox.image
    engine = DockerEngine(timeout=timeout)
    try:
        version = engine.client().version().get("Version", "?")
    except ToolUnavailable as exc:
        fix = "start Docker (or point DOCKER_HOST at a running engine)"
        return [
            failed("docker engine", str(exc), fix, needed=False),
            skipped("sandbox image", "not checked: no engine"),
        ]
    try:
        if exists(engine, image):
            found = ok("sandbox image", f"{image} is there")
        else:
            found = failed(
                "sandbox image",
                f"{image} is not in the engine, so /run uses SafeREPL",
                "run `lancelot sandbox build` once",
                needed=False,
            )
    finally:
        engine.reset()
    return [ok("docker engine", f"Docker {version} answers"), found]


def check_local_model(settings: Settings) -> list[Finding]:
    """The local model's file (optional unless LANCELOT_LOCAL_MODEL names one)."""
    from core.llm.model_file import INSTALL_HINT, PACKAGE

    name = "local model"
    with contextlib.suppress(FeatureError):  # the switches check reports a bad value
        if not FeatureFlags().enabled("LOCAL_MODEL"):
            return [skipped(name, "off (FEATURE_LOCAL_MODEL)")]
    configured = settings.llm.local_model
    if configured is not None and not configured.is_file():
        fix = "set LANCELOT_LOCAL_MODEL to a GGUF file, or unset it"
        return [failed(name, f"LANCELOT_LOCAL_MODEL: {configured} is not a file", fix)]
    if importlib.util.find_spec("llama_cpp") is None:
        fix = "pip install 'lancelot[local]'"
        return [failed(name, "llama-cpp-python is not installed", fix, needed=False)]
    if configured is not None:
        return [ok(name, f"{configured} ({configured.stat().st_size // MB:,} MB)")]
    if importlib.util.find_spec(PACKAGE) is None:
        return [failed(name, "no model file", INSTALL_HINT, needed=False)]
    return [ok(name, "the packaged Gemma 3 270M (put in LANCELOT_HOME/models on first use)")]


def _port_free(host: str, port: int) -> bool:
    with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as aiohttp binds
        try:
            sock.bind((host, port))
        except OSError as exc:
            if exc.errno == errno.EADDRINUSE:
                return False
            raise
    return True


def _running_lancelot(home: Path) -> str | None:
    """The pid of the Lancelot holding this home's lock, if one runs."""
    path = home.expanduser() / LOCK_FILE
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return os.pread(fd, 32, 0).decode("ascii", "replace").strip() or "?"
        fcntl.flock(fd, fcntl.LOCK_UN)
        return None
    finally:
        os.close(fd)


def check_port(settings: Settings) -> list[Finding]:
    """The web port is free, or held by the Lancelot of this home."""
    host, port = settings.web.host, settings.web.port
    try:
        free = _port_free(host, port)
    except OSError as exc:
        fix = "set LANCELOT_WEB_HOST to an address of this machine (127.0.0.1 or 0.0.0.0)"
        return [failed("web port", f"cannot bind {host}:{port}: {exc.strerror or exc}", fix)]
    if free:
        return [ok("web port", f"{host}:{port} is free")]
    pid = _running_lancelot(settings.home)
    if pid is not None:
        return [ok("web port", f"{host}:{port} is served by the Lancelot of this home (pid {pid})")]
    fix = "stop that program, or set LANCELOT_WEB_PORT to a free port"
    return [failed("web port", f"{host}:{port} is used by another program", fix)]


def check_receipts(settings: Settings) -> list[Finding]:
    """`lancelot receipts verify`: the hash chain and every signed checkpoint."""
    from core.receipts.evidence import Evidence
    from core.receipts.verify import verify_ledger

    home = settings.home.expanduser().resolve()
    path = home / LEDGER_FILE
    if not path.is_file():
        return [skipped("receipts", "no ledger yet (made on the first run)")]
    fix = "run `lancelot receipts verify` for the details, and keep a copy of ledger.db"
    try:
        evidence = Evidence.of_home(home, settings.ledger.checkpoint_every_receipts)
        report = verify_ledger(path, evidence)
    except StorageError as exc:
        return [failed("receipts", str(exc), fix)]
    if not report.ok:
        where = f" at receipt #{report.first_bad_seq}" if report.first_bad_seq is not None else ""
        return [failed("receipts", f"{report.reason}{where}", fix)]
    return [ok("receipts", f"{report.checked:,} receipts, hash chain intact, head {report.head}")]
