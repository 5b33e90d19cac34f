""".ci/run installs what the README's test command needs on a bare Debian machine: the list
comes from .ci/packages, checked here on a bare Debian (the sandbox image, made from Debian's
minimal base) against Debian's own package index."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.ci import IN_CI

REPO = Path(__file__).resolve().parents[1]
# Python 3.11 with venv (the image's python3-minimal runs python3.11 but cannot make a venv);
# the `local` extra's compilers; the engine, debootstrap, Chromium and docker-compose.
NEEDED = {
    "python3.11",
    "python3.11-venv",
    "gcc",
    "g++",
    "make",
    "cmake",
    "docker.io",
    "debootstrap",
    "chromium",
    "docker-compose",
    "npm",
}


@pytest.mark.slow
def test_a_bare_debian_lacks_these_and_apt_can_install_them(docker_image: str) -> None:
    script = (
        'set -e; missing=$(bash /ci/packages); echo "$missing"; echo ---; '
        "apt-get update -qq; apt-get install --simulate -qq $missing >/dev/null; echo installable"
    )
    done = subprocess.run(
        ["docker", "run", "--rm", "--user", "root", "-v", f"{REPO / '.ci'}:/ci:ro",
         docker_image, "bash", "-c", script],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    listed, _, result = done.stdout.partition("---\n")
    assert set(listed.split()) == NEEDED, done.stderr
    assert done.returncode == 0, done.stderr
    assert result.strip() == "installable"


def test_after_ci_run_nothing_is_missing() -> None:
    if not IN_CI:
        pytest.skip("only where .ci/run has installed the packages")
    done = subprocess.run([REPO / ".ci" / "packages"], capture_output=True, text=True)
    assert (done.returncode, done.stdout) == (0, "")


def test_the_readme_tells_a_newcomer_what_to_install() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    test_it = readme.split("## Test it\n", 1)[1].split("\n## ", 1)[0]
    assert [name for name in sorted(NEEDED) if f"`{name}`" not in test_it] == []
    install = next(line for line in test_it.splitlines() if "apt-get install" in line)
    # What the test command itself cannot do without; the rest only un-skips tests.
    for name in ("python3.11", "python3.11-venv", "gcc", "g++", "make", "cmake"):
        assert f" {name}" in install
