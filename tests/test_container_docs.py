"""The container's three descriptions agree: the commands in docs/operations.md, compose.yaml
and the Dockerfile name the same image, volume, port, user and settings (the slow test that
builds and runs the image is tests/test_container.py)."""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import yaml

from tests.ci import unavailable

REPO = Path(__file__).resolve().parents[1]
README = (REPO / "README.md").read_text(encoding="utf-8")
OPERATIONS = (REPO / "docs" / "operations.md").read_text(encoding="utf-8")
SETTINGS = (REPO / "docs" / "settings.md").read_text(encoding="utf-8")
DOCKERFILE = (REPO / "Dockerfile").read_text(encoding="utf-8")
COMPOSE = REPO / "compose.yaml"


def container_section() -> str:
    return OPERATIONS.split("## Run it in a container\n", 1)[1].split("\n## ", 1)[0]


def documented_commands() -> list[list[str]]:
    """The section's shell commands, each as its words (continued lines joined)."""
    blocks = re.findall(r"```sh\n(.*?)```", container_section(), re.S)
    lines = "\n".join(blocks).replace("\\\n", " ").splitlines()
    return [shlex.split(line) for line in lines if line.strip()]


def documented_run() -> list[str]:
    """The first `docker run` of docs/operations.md: the plain one, with a named volume."""
    return next(c for c in documented_commands() if c[:2] == ["docker", "run"])


def option_values(command: list[str], flag: str) -> list[str]:
    return [command[i + 1] for i, word in enumerate(command[:-1]) if word == flag]


def test_the_docs_build_and_run_the_image_compose_names() -> None:
    service = yaml.safe_load(COMPOSE.read_text())["services"]["lancelot"]
    build = next(c for c in documented_commands() if c[:2] == ["docker", "build"])
    assert option_values(build, "-t") == [service["image"]] == ["lancelot"]
    run = documented_run()
    assert run[-1] == service["image"]
    assert option_values(run, "-p") == service["ports"] == ["127.0.0.1:8080:8080"]
    assert option_values(run, "-v") == service["volumes"] == ["lancelot-data:/data"]
    assert service["build"]["context"] == "."
    assert service["build"]["args"] == {"LOCAL": "false", "BASE": "${BASE:-python:3.11-slim}"}


def test_compose_keeps_its_data_on_a_named_volume() -> None:
    compose = yaml.safe_load(COMPOSE.read_text())
    volume = compose["services"]["lancelot"]["volumes"][0].split(":")[0]
    assert volume in compose["volumes"]


def test_compose_passes_only_settings_the_reference_documents() -> None:
    settings = SETTINGS
    names = yaml.safe_load(COMPOSE.read_text())["services"]["lancelot"]["environment"]
    assert names
    assert all(re.fullmatch(r"[A-Z_]+", name) for name in names)  # names only: from the shell
    assert [n for n in names if f"`{n}`" not in settings] == []


def test_the_watchdog_service_reads_the_data_and_holds_only_the_way_to_the_owner() -> None:
    services = yaml.safe_load(COMPOSE.read_text())["services"]
    watchdog = services["watchdog"]
    assert watchdog["command"] == ["lancelot", "watchdog"]
    assert watchdog["image"] == services["lancelot"]["image"]
    assert watchdog["build"] == services["lancelot"]["build"]
    assert watchdog["volumes"] == [services["lancelot"]["volumes"][0] + ":ro"]
    assert watchdog["environment"] == [
        "TELEGRAM_BOT_TOKEN",
        "TELEGRAM_OWNER_ID",
        "GCHAT_WEBHOOK_URL",
    ]
    assert "ports" not in watchdog


def test_the_dockerfile_matches_what_the_docs_say() -> None:
    port = documented_run()[documented_run().index("-p") + 1].rsplit(":", 1)[1]
    data = documented_run()[documented_run().index("-v") + 1].split(":")[1]
    assert f"EXPOSE {port}" in DOCKERFILE
    assert f'VOLUME ["{data}"]' in DOCKERFILE
    assert f"LANCELOT_HOME={data}" in DOCKERFILE
    assert f"LANCELOT_WEB_PORT={port}" in DOCKERFILE
    assert "useradd --create-home --uid 10001 lancelot" in DOCKERFILE
    assert "USER lancelot" in DOCKERFILE
    assert "ARG BASE=python:3.11-slim" in DOCKERFILE
    assert "ARG LOCAL=false" in DOCKERFILE
    for claim in ("`--build-arg LOCAL=true`", "`--build-arg BASE=...`", "`python:3.11-slim`"):
        assert claim in container_section()


def test_the_socket_recipe_keeps_the_data_at_the_same_path() -> None:
    run = [c for c in documented_commands() if c[:2] == ["docker", "run"]][1]
    mounts = [v.split(":") for v in option_values(run, "-v")]
    assert ["/var/run/docker.sock", "/var/run/docker.sock"] in mounts
    home = option_values(run, "-e")[0].split("=", 1)
    assert home[0] == "LANCELOT_HOME"
    assert [home[1], home[1]] in mounts  # the engine resolves the sandbox's mounts on the host
    assert "--group-add" in run


def compose_command() -> list[str] | None:
    """The compose command here: the docker CLI's plugin, or Debian's docker-compose."""
    if shutil.which("docker") is not None:
        probe = subprocess.run(["docker", "compose", "version"], capture_output=True, check=False)
        if probe.returncode == 0:
            return ["docker", "compose"]
    return ["docker-compose"] if shutil.which("docker-compose") is not None else None


def test_compose_config_is_valid_where_docker_compose_is_installed() -> None:
    compose = compose_command()
    if compose is None:
        unavailable("no docker compose", needs="docker compose or docker-compose")
    done = subprocess.run(
        [*compose, "-f", str(COMPOSE), "config", "--quiet"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr


def test_the_slow_container_test_can_be_left_out() -> None:
    test_it = README.split("## Test it\n", 1)[1].split("\n## ", 1)[0]
    assert "python -m tests -m 'not container'" in test_it
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider",
         "-m", "not container", str(REPO / "tests" / "test_container.py")],
        capture_output=True, text=True, check=False, cwd=REPO,
    )  # fmt: skip
    assert "deselected" in done.stdout, done.stdout
    assert "::test_" not in done.stdout  # -q lists each collected test by its id
