"""The slow container test: the Dockerfile builds (on a base made here from Debian packages,
no registry), the image runs with no tokens as a non-root user with its data on a volume, and
`/health/ready` answers 200 from the host; with the Docker socket mounted, `/run` inside the
container uses the sandbox. Skipped without an engine, failing under CI=true."""

from __future__ import annotations

import http.cookiejar
import json
import os
import shutil
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest
import yaml

from bot.container import BASE, BASE_IMAGE
from bot.web import SESSION_COOKIE
from core.tools.sandbox import DockerEngine, SandboxUnavailable
from core.tools.sandbox.debian import build_debian_image, exists
from core.tools.sandbox.limits import FALLBACK_UID
from tests.ci import unavailable
from tests.test_container_docs import compose_command, documented_run

pytestmark = [pytest.mark.slow, pytest.mark.container, pytest.mark.timeout(1800)]

REPO = Path(__file__).resolve().parents[1]
IMAGE = "lancelot-test:latest"
NEEDS = "a Docker engine, its CLI, debootstrap and root (to build the container image)"
READY_WITHIN = 120.0


def docker(
    *args: str, check: bool = True, input: str | None = None, timeout: float | None = None
) -> subprocess.CompletedProcess[str]:
    """The docker CLI, as the commands in docs/operations.md use it."""
    done = subprocess.run(
        ["docker", *args], capture_output=True, text=True, input=input, timeout=timeout
    )
    if check and done.returncode != 0:
        raise AssertionError(f"docker {args[0]} failed ({done.returncode}): {done.stderr[-2000:]}")
    return done


def ensure_base() -> None:
    """The base made here from Debian packages, built once when missing."""
    engine = DockerEngine()
    try:
        engine.ping()
        if not exists(engine, BASE_IMAGE):
            if shutil.which("debootstrap") is None or os.geteuid() != 0:
                unavailable("no base image and no way to build it (debootstrap, root)", needs=NEEDS)
            build_debian_image(engine, BASE_IMAGE, BASE, as_root="root")
    except SandboxUnavailable as exc:
        unavailable(str(exc), needs=NEEDS)
    finally:
        engine.close()


@pytest.fixture(scope="module")
def image() -> str:
    """The Dockerfile built FROM the base made here (once), timed."""
    if shutil.which("docker") is None:
        unavailable("no docker CLI", needs=NEEDS)
    ensure_base()
    started = time.monotonic()
    docker("build", "--build-arg", f"BASE={BASE_IMAGE}", "-t", IMAGE, str(REPO))
    print(f"container build: {time.monotonic() - started:.1f} s")
    return IMAGE


def published_port(name: str) -> int:
    """The host port Docker picked for the container's 8080."""
    line = docker("port", name, "8080/tcp").stdout.splitlines()[0]
    return int(line.rsplit(":", 1)[1])


def get_ready(port: int) -> tuple[int, dict[str, object]]:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/health/ready", timeout=5) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def wait_ready(name: str, port: int) -> tuple[int, dict[str, object]]:
    """/health/ready's first answer, polled until the web app listens."""
    deadline = time.monotonic() + READY_WITHIN
    while time.monotonic() < deadline:
        try:
            status, body = get_ready(port)
        except (urllib.error.URLError, ConnectionError, json.JSONDecodeError):
            time.sleep(0.25)
            continue
        if body.get("ready") or status != 503:
            return status, body
        time.sleep(0.25)  # 503 while starting: try again until the deadline
    logs = docker("logs", name, check=False)
    raise AssertionError(f"not ready in {READY_WITHIN} s: {(logs.stdout + logs.stderr)[-3000:]}")


def as_in_docs(image: str, name: str, volume: str) -> list[str]:
    """The `docker run` of docs/operations.md, with this test's image, name, volume and a free
    host port."""
    command = documented_run()
    values = {"--name": name, "-p": "127.0.0.1::8080", "-v": f"{volume}:/data"}
    for i, word in enumerate(command[:-1]):
        if word in values:
            command[i + 1] = values[word]
    assert command[-1] == "lancelot"
    return [*command[1:-1], image]


@pytest.fixture
def running(image: str) -> Iterator[str]:
    """The image run as docs/operations.md says, with no tokens, on a free host port; removed after
    with its volume."""
    name = f"lancelot-test-{uuid.uuid4().hex[:8]}"
    volume = f"{name}-data"
    docker(*as_in_docs(image, name, volume))
    try:
        yield name
    finally:
        docker("rm", "-f", "-v", name, check=False)
        docker("volume", "rm", "-f", volume, check=False)


def test_the_image_runs_with_no_tokens_and_is_ready_from_the_host(running: str) -> None:
    started = time.monotonic()
    status, body = wait_ready(running, published_port(running))
    print(f"container run to ready: {time.monotonic() - started:.1f} s")
    assert status == 200
    assert body["ready"] is True
    # No engine inside the container: the sandbox is missing, which degrades, not unreadies.
    assert body["degraded"] is True
    reasons = body["degraded_reasons"]
    assert isinstance(reasons, list)
    assert any(str(reason).startswith("sandbox: ") for reason in reasons)
    inspect = json.loads(docker("inspect", running).stdout)[0]
    assert inspect["State"]["Running"] is True
    # The image's own HEALTHCHECK passes against the same Lancelot.
    check = inspect["Config"]["Healthcheck"]["Test"]
    assert check[0] == "CMD-SHELL"
    assert "/health/ready" in check[1]
    assert docker("exec", running, "sh", "-c", check[1], check=False).returncode == 0
    assert docker("exec", running, "id", "-u").stdout.strip() == str(FALLBACK_UID)
    # LANCELOT_HOME is /data, on the named volume.
    mounts = {m["Destination"]: m for m in inspect["Mounts"]}
    assert mounts["/data"]["Type"] == "volume"
    assert "ledger.db" in docker("exec", running, "ls", "/data").stdout.split()


def signed_in_with_link(container: str, port: int) -> None:
    """`docker exec ... lancelot link`, the link opened from the host: the receipt list."""
    said = docker("exec", container, "lancelot", "link", timeout=60)
    url = urlsplit(said.stdout.strip())
    assert (url.scheme, url.path) == ("http", "/receipts")
    assert url.query.startswith("t=")
    jar = http.cookiejar.CookieJar()
    opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))
    with opener.open(f"http://127.0.0.1:{port}{url.path}?{url.query}", timeout=10) as page:
        assert page.status == 200
    assert SESSION_COOKIE in {cookie.name for cookie in jar}
    with opener.open(f"http://127.0.0.1:{port}/receipts", timeout=10) as signed_in:
        assert signed_in.status == 200  # without the session: 401


def test_docker_exec_lancelot_link_opens_the_receipts_from_the_host(running: str) -> None:
    """The container's way in without a chat: a one-time link from the running instance."""
    port = published_port(running)
    wait_ready(running, port)
    signed_in_with_link(running, port)


def receipts_in(container: str) -> int:
    """How many receipts the container's ledger holds (`lancelot receipts verify` inside)."""
    said = docker("exec", container, "lancelot", "receipts", "verify", "--json", timeout=120)
    found = json.loads(said.stdout)
    assert found["ok"] is True, found
    return int(found["checked"])


def test_compose_up_a_link_and_a_restart_keep_the_data(image: str, tmp_path: Path) -> None:
    """compose.yaml as shipped (its port on a free host port, its image under a test name,
    its build context this checkout): built on the base made here, up, ready, a link from
    `docker exec`, restarted with the receipts kept, down."""
    compose = compose_command()
    if compose is None:
        unavailable("no docker compose", needs="docker compose or docker-compose")
    project = f"lancelot-test-{uuid.uuid4().hex[:8]}"
    spec = yaml.safe_load((REPO / "compose.yaml").read_text())
    for service in spec["services"].values():
        service["build"]["context"] = str(REPO)
        service["image"] = project
    spec["services"]["lancelot"]["ports"] = ["127.0.0.1::8080"]
    (tmp_path / "compose.yaml").write_text(yaml.safe_dump(spec))
    run = [*compose, "-f", str(tmp_path / "compose.yaml"), "-p", project]
    env = {**os.environ, "BASE": BASE_IMAGE}
    try:
        up = subprocess.run([*run, "up", "-d", "--build", "lancelot"], env=env,
                            capture_output=True, text=True, timeout=1200)  # fmt: skip
        assert up.returncode == 0, up.stderr[-3000:]
        name = subprocess.run([*run, "ps", "-q", "lancelot"], env=env, capture_output=True,
                              text=True, check=True).stdout.strip()  # fmt: skip
        port = published_port(name)
        wait_ready(name, port)
        signed_in_with_link(name, port)
        before = receipts_in(name)
        subprocess.run([*run, "restart", "lancelot"], env=env, check=True, timeout=300)
        wait_ready(name, published_port(name))
        assert receipts_in(name) > before  # the same volume: kept, and a start recorded
    finally:
        subprocess.run([*run, "down", "-v", "--rmi", "local"], env=env, capture_output=True,
                       check=False, timeout=300)  # fmt: skip
        docker("image", "rm", "-f", project, check=False)


def test_without_an_engine_run_falls_back_inside_the_container(image: str) -> None:
    said = docker(
        "run", "--rm", "-i", image, "lancelot", "chat",
        input="/run ls\n/run echo hi > b.txt\n", timeout=300,
    ).stdout  # fmt: skip
    assert "ran on safe_repl" in said
    assert "the sandbox engine is not reachable" in said
    assert "[1] Approve" in said  # nothing can be seen before it happens: it asks first


SOCKET = Path("/var/run/docker.sock")


@pytest.fixture
def host_dir() -> Iterator[Path]:
    """A directory on the host that the container's user (uid 10001) may reach."""
    if not SOCKET.is_socket():
        unavailable(f"no engine socket at {SOCKET}", needs=NEEDS)
    parent = Path(tempfile.mkdtemp(prefix="lancelot-container-"))
    parent.chmod(0o755)
    try:
        yield parent
    finally:
        shutil.rmtree(parent, ignore_errors=True)


def with_socket(
    image: str, command: list[str], *, same_path: Path | None = None, stdin: str = "", **env: str
) -> str:
    """`docker run` as docs/operations.md says to give the container the engine: its socket, the
    socket's group, and `same_path` mounted at the same path inside."""
    options = ["-v", f"{SOCKET}:{SOCKET}", "--group-add", str(SOCKET.stat().st_gid)]
    if same_path is not None:
        options += ["-v", f"{same_path}:{same_path}"]
    for name, value in env.items():
        options += ["-e", f"{name}={value}"]
    done = docker("run", "--rm", "-i", *options, image, *command, input=stdin, timeout=300)
    return done.stdout + done.stderr


def test_with_the_docker_socket_mounted_run_uses_the_sandbox(
    image: str, docker_image: str, host_dir: Path
) -> None:
    """The data directory is mounted at the same path on both sides: the engine resolves the
    sandbox's mounts on the host."""
    home = host_dir / "home"
    home.mkdir()
    os.chown(home, FALLBACK_UID, FALLBACK_UID)
    said = with_socket(
        image, ["lancelot", "chat"], same_path=home, stdin="/run echo hi > b.txt\n",
        LANCELOT_HOME=str(home), LANCELOT_SANDBOX_IMAGE=docker_image,
    )  # fmt: skip
    # Run in the sandbox, a created file applies at once (Undo offered); without it, the
    # command would wait for an Approve and b.txt would not exist.
    assert (home / "workspace" / "b.txt").read_text() == "hi\n", said
    assert "Undo" in said, said


def test_the_docker_socket_grants_root_on_the_host(
    image: str, docker_image: str, host_dir: Path
) -> None:
    """Why docs/operations.md warns: through the socket, the container's non-root user starts a
    container that reads a file only the host's root may read."""
    secret = host_dir / "root-only"
    secret.write_text(f"host secret {uuid.uuid4().hex}\n")
    secret.chmod(0o600)
    read = (
        "import docker; print(docker.from_env().containers.run("
        f"{docker_image!r}, ['cat', '/host{secret}'], user='root', remove=True, "
        "volumes={'/': {'bind': '/host', 'mode': 'ro'}}).decode(), end='')"
    )
    said = with_socket(image, ["python", "-c", read])
    assert said == secret.read_text()


LOCAL_IMAGE = "lancelot-test:local"
GENERATE = """
import pathlib, tempfile
from llama_cpp import Llama
from core.llm.model_file import resolve_model
model = resolve_model(None, pathlib.Path(tempfile.mkdtemp()))
llm = Llama(model_path=str(model), n_ctx=128, verbose=False)
print(repr(llm.create_completion("The capital of France is", max_tokens=4)["choices"][0]["text"]))
"""


def test_the_local_extra_is_a_build_argument(image: str) -> None:
    """LOCAL=true: llama-cpp-python compiled in the image (the slow part, once per engine:
    the layers before it are shared with the default build) and the packaged Gemma 3 270M,
    which loads and generates inside the container."""
    started = time.monotonic()
    docker(
        "build", "--build-arg", f"BASE={BASE_IMAGE}", "--build-arg", "LOCAL=true",
        "-t", LOCAL_IMAGE, str(REPO),
    )  # fmt: skip
    print(f"container build with LOCAL=true: {time.monotonic() - started:.1f} s")
    done = docker("run", "--rm", LOCAL_IMAGE, "python", "-c", GENERATE, timeout=300)
    text = done.stdout.strip()
    assert text.startswith("'"), done.stderr
    assert text.strip("'").strip(), done.stdout
    # The default build stays without it.
    plain = docker("run", "--rm", image, "python", "-c", "import llama_cpp", check=False)
    assert "No module named 'llama_cpp'" in plain.stderr
