"""`lancelot container base`: made once, skipped when it exists, clear when it cannot work; the
base trusts the CAs this machine's owner added (a TLS-inspecting proxy's), and only those."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from bot.cli import main
from bot.container import BASE_IMAGE, BUNDLE, trust_local_cas
from core.tools.sandbox import DockerEngine, SandboxUnavailable
from tests.ci import unavailable
from tests.test_container import ensure_base


def test_an_existing_base_is_kept_and_the_next_step_named(
    capsys: pytest.CaptureFixture[str],
) -> None:
    ensure_base()
    assert main(["container", "base"]) == 0
    out = capsys.readouterr().out
    assert f"{BASE_IMAGE} already exists (use --force to rebuild)" in out
    assert f"docker build --build-arg BASE={BASE_IMAGE} -t lancelot ." in out


def test_without_an_engine_it_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path}/none.sock")
    assert main(["container", "base"]) == 1
    assert "container base failed: the sandbox engine is not reachable" in capsys.readouterr().err


def test_without_root_it_names_the_sudo_command_that_works(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    engine = DockerEngine()
    try:
        engine.ping()
    except SandboxUnavailable as exc:
        unavailable(str(exc), needs="a Docker engine")
    finally:
        engine.close()
    monkeypatch.setattr("os.geteuid", lambda: 1000)
    monkeypatch.setattr("sys.argv", [str(Path(sys.executable).with_name("lancelot")), "x"])
    assert main(["container", "base", "--force"]) == 1
    said = capsys.readouterr().err
    command = said.split("run sudo ", 1)[1].split()
    assert Path(command[0]).is_absolute()  # sudo's PATH has no virtualenv
    assert command[1:] == ["container", "base"]


def test_the_base_trusts_the_locally_added_cas(tmp_path: Path) -> None:
    rootfs, local = tmp_path / "rootfs", tmp_path / "local-cas"
    (rootfs / BUNDLE).parent.mkdir(parents=True)
    (rootfs / BUNDLE).write_text("DEBIAN ROOTS\n")
    local.mkdir()
    (local / "proxy.crt").write_text("PROXY CA\n")
    (local / "notes.txt").write_text("not a certificate\n")
    trust_local_cas(rootfs, local)
    assert (rootfs / BUNDLE).read_text() == "DEBIAN ROOTS\nPROXY CA\n"
    copied = rootfs / local.relative_to("/")
    assert sorted(p.name for p in copied.iterdir()) == ["proxy.crt"]


def test_with_no_local_cas_the_bundle_stays_debians(tmp_path: Path) -> None:
    rootfs = tmp_path / "rootfs"
    (rootfs / BUNDLE).parent.mkdir(parents=True)
    (rootfs / BUNDLE).write_text("DEBIAN ROOTS\n")
    trust_local_cas(rootfs, tmp_path / "none")
    assert (rootfs / BUNDLE).read_text() == "DEBIAN ROOTS\n"
