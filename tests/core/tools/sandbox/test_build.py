"""`lancelot sandbox build`: idempotent, clear when it cannot work, users and mirror right."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from bot.cli import main
from core.tools.sandbox.debian import prune
from core.tools.sandbox.image import apt_mirror, prepare_rootfs


def test_build_skips_an_image_that_exists(
    docker_image: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LANCELOT_SANDBOX_IMAGE", docker_image)
    assert main(["sandbox", "build"]) == 0
    assert f"{docker_image} already exists (use --force to rebuild)" in capsys.readouterr().out


def test_build_without_an_engine_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path}/none.sock")
    assert main(["sandbox", "build"]) == 1
    assert "the sandbox engine is not reachable" in capsys.readouterr().err


def test_rootfs_gets_the_sandbox_users_and_a_mount_point(tmp_path: Path) -> None:
    rootfs = tmp_path / "rootfs"
    (rootfs / "etc").mkdir(parents=True)
    (rootfs / "etc/passwd").write_text("root:x:0:0:root:/root:/bin/sh\n")
    (rootfs / "etc/group").write_text("root:x:0:\n")
    (rootfs / "usr/share/doc/pkg").mkdir(parents=True)
    prune(rootfs)
    prepare_rootfs(rootfs)
    passwd = (rootfs / "etc/passwd").read_text()
    assert "sandbox:x:10001:10001:" in passwd
    assert "keeper:x:10002:10002:" in passwd
    assert (rootfs / "workspace").is_dir()
    assert list((rootfs / "usr/share/doc").iterdir()) == []


def test_the_mirror_comes_from_apt_in_either_format(tmp_path: Path) -> None:
    deb822 = tmp_path / "debian.sources"
    deb822.write_text(
        "Types: deb\nURIs: http://mirror.invalid/debian-security\nSuites: bookworm-security\n\n"
        "Types: deb\nURIs: http://mirror.invalid/debian\nSuites: bookworm\n"
    )
    one_line = tmp_path / "sources.list"
    one_line.write_text("# comment\ndeb [arch=amd64] http://other.invalid/debian bookworm main\n")
    assert apt_mirror((deb822, one_line)) == "http://mirror.invalid/debian"
    assert apt_mirror((tmp_path / "missing", one_line)) == "http://other.invalid/debian"
    assert apt_mirror((tmp_path / "missing",)) is None


def test_without_root_it_names_the_sudo_command_that_works(
    docker_image: str,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr("os.geteuid", lambda: 1000)
    monkeypatch.setenv("LANCELOT_SANDBOX_IMAGE", "lancelot-test-never-built:none")
    monkeypatch.setattr("sys.argv", [str(Path(sys.executable).with_name("lancelot")), "sandbox"])
    assert main(["sandbox", "build"]) == 1
    said = capsys.readouterr().err
    command = said.split("run sudo ", 1)[1].split()[0]
    assert Path(command).is_absolute()  # sudo's PATH has no virtualenv
    assert Path(command).name == "lancelot"
    assert Path(command).exists()
