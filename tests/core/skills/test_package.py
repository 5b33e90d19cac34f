"""Packages: the .zip round trip, signatures, and every kind of tampering refused."""

from __future__ import annotations

import hashlib
import importlib.util
import json
import stat
import zipfile
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from core.skills.factory import (
    build_skill_package,
    generate_skeleton,
    verify_marketplace_permissions,
)
from core.skills.manifest import ManifestError, load_manifest
from core.skills.package import PackageRejected, SignatureState, digest_of, folder_digest
from core.skills.permissions import MARKETPLACE_BASE, Permission
from tests.core.skills.builder import ECHO, write_skill


@pytest.fixture
def skill(tmp_path: Path) -> Path:
    return generate_skeleton("greeter", tmp_path / "src", "Says hello.")


def _entries(package: Path) -> dict[str, bytes]:
    with zipfile.ZipFile(package) as archive:
        return {name: archive.read(name) for name in archive.namelist()}


def _rewrite(package: Path, entries: dict[str, bytes]) -> None:
    with zipfile.ZipFile(package, "w") as archive:
        for name, data in entries.items():
            archive.writestr(name, data)


def test_skeleton_is_a_valid_skill_whose_own_test_passes(skill: Path) -> None:
    assert sorted(p.name for p in skill.iterdir()) == ["skill.py", "skill.yaml", "test_skill.py"]
    assert load_manifest(skill).permissions == (Permission.READ_INPUT, Permission.WRITE_OUTPUT)
    spec = importlib.util.spec_from_file_location("greeter_test", skill / "test_skill.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.test_echoes_its_input()


def test_skeleton_refuses_a_name_that_is_a_path(tmp_path: Path) -> None:
    with pytest.raises(ManifestError):
        generate_skeleton("../escape", tmp_path / "src")
    assert not (tmp_path / "escape").exists()
    assert not (tmp_path / "src").exists()


def test_round_trip_unsigned(skill: Path, tmp_path: Path) -> None:
    package = build_skill_package(skill, tmp_path / "greeter.zip")
    report = verify_marketplace_permissions(package)
    assert report.manifest.name == "greeter"
    assert report.signature is SignatureState.UNSIGNED
    assert report.digest == folder_digest(skill)
    assert report.files["skill.py"] == (skill / "skill.py").read_bytes()


def test_signatures_signed_and_verified(skill: Path, tmp_path: Path) -> None:
    key = Ed25519PrivateKey.generate()
    package = build_skill_package(skill, tmp_path / "greeter.zip", signing_key=key)
    assert verify_marketplace_permissions(package).signature is SignatureState.SIGNED
    trusted = frozenset({key.public_key().public_bytes_raw().hex()})
    report = verify_marketplace_permissions(package, trusted_keys=trusted)
    assert report.signature is SignatureState.VERIFIED


def test_changed_code_is_refused(skill: Path, tmp_path: Path) -> None:
    package = build_skill_package(skill, tmp_path / "greeter.zip")
    entries = _entries(package)
    entries["skill.py"] += b"\nimport os; os.system('id')\n"
    _rewrite(package, entries)
    with pytest.raises(PackageRejected, match=r"skill\.py: hash does not match"):
        verify_marketplace_permissions(package)


def test_rehashed_file_without_new_content_hash_is_refused(skill: Path, tmp_path: Path) -> None:
    package = build_skill_package(skill, tmp_path / "greeter.zip")
    entries = _entries(package)
    entries["skill.py"] += b"\n# changed\n"
    info = json.loads(entries["PACKAGE.json"])
    info["files"]["skill.py"] = hashlib.sha256(entries["skill.py"]).hexdigest()
    entries["PACKAGE.json"] = json.dumps(info).encode()
    _rewrite(package, entries)
    with pytest.raises(PackageRejected, match="content hash does not match"):
        verify_marketplace_permissions(package)


def test_fully_rehashed_but_signed_package_is_refused(skill: Path, tmp_path: Path) -> None:
    package = build_skill_package(skill, tmp_path / "p.zip", Ed25519PrivateKey.generate())
    entries = _entries(package)
    entries["skill.py"] += b"\n# changed\n"
    info = json.loads(entries["PACKAGE.json"])
    info["files"]["skill.py"] = hashlib.sha256(entries["skill.py"]).hexdigest()

    info["digest"] = digest_of(info["files"])
    entries["PACKAGE.json"] = json.dumps(info).encode()
    _rewrite(package, entries)
    with pytest.raises(PackageRejected, match="signature does not match"):
        verify_marketplace_permissions(package)


@pytest.mark.parametrize(
    "name", ["../evil.py", "/etc/evil.py", "a/../../evil.py", "a\\..\\evil.py", "./skill.py"]
)
def test_path_traversal_is_refused(skill: Path, tmp_path: Path, name: str) -> None:
    package = build_skill_package(skill, tmp_path / "greeter.zip")
    with zipfile.ZipFile(package, "a") as archive:
        archive.writestr(name, b"print('escaped')")
    with pytest.raises(PackageRejected, match="unsafe path"):
        verify_marketplace_permissions(package)


def test_symlink_entry_is_refused(skill: Path, tmp_path: Path) -> None:
    package = build_skill_package(skill, tmp_path / "greeter.zip")
    link = zipfile.ZipInfo("link.py")
    link.external_attr = (stat.S_IFLNK | 0o777) << 16
    with zipfile.ZipFile(package, "a") as archive:
        archive.writestr(link, "/etc/passwd")
    with pytest.raises(PackageRejected, match="symlink"):
        verify_marketplace_permissions(package)


def test_unlisted_file_is_refused(skill: Path, tmp_path: Path) -> None:
    package = build_skill_package(skill, tmp_path / "greeter.zip")
    with zipfile.ZipFile(package, "a") as archive:
        archive.writestr("extra.py", b"x = 1")
    with pytest.raises(PackageRejected, match="file list"):
        verify_marketplace_permissions(package)


def test_not_a_zip_is_refused(tmp_path: Path) -> None:
    fake = tmp_path / "fake.zip"
    fake.write_bytes(b"not a zip at all")
    with pytest.raises(PackageRejected, match="not a zip"):
        verify_marketplace_permissions(fake)


def test_marketplace_permissions_are_limited_unless_allowed(tmp_path: Path) -> None:
    folder = write_skill(
        tmp_path, "runner", ECHO, permissions=["read_input", "write_output", "run_commands"]
    )
    package = build_skill_package(folder, tmp_path / "runner.zip")
    with pytest.raises(PackageRejected, match="run_commands"):
        verify_marketplace_permissions(package)
    allowed = MARKETPLACE_BASE | {Permission.RUN_COMMANDS}
    assert verify_marketplace_permissions(package, allowed=allowed).manifest.name == "runner"


def test_package_with_invalid_manifest_is_refused(tmp_path: Path) -> None:
    folder = write_skill(tmp_path, "broken", ECHO)
    package = build_skill_package(folder, tmp_path / "broken.zip")
    entries = _entries(package)
    entries["skill.yaml"] = b"name: broken\n"
    info = json.loads(entries["PACKAGE.json"])
    info["files"]["skill.yaml"] = hashlib.sha256(entries["skill.yaml"]).hexdigest()

    info["digest"] = digest_of(info["files"])
    entries["PACKAGE.json"] = json.dumps(info).encode()
    _rewrite(package, entries)
    with pytest.raises(PackageRejected, match="version"):
        verify_marketplace_permissions(package)


ESCAPES = {
    "imports os": "import os\n",
    "imports from subprocess": "from subprocess import run\n",
    "relative import": "from . import helper\n",
    "dunder import": "m = __import__('os')\n",
    "eval": "eval('1')\n",
    "open": "open('/etc/passwd')\n",
    "getattr": "getattr(object, 'x')\n",
    "dunder walk": "x = ().__class__.__bases__\n",
    "builtins": "b = __builtins__\n",
}


@pytest.mark.parametrize("line", ESCAPES.values(), ids=ESCAPES.keys())
def test_marketplace_code_outside_the_allowlist_is_refused(tmp_path: Path, line: str) -> None:
    folder = write_skill(tmp_path, "sneaky", ECHO + line)
    package = build_skill_package(folder, tmp_path / "sneaky.zip")
    with pytest.raises(PackageRejected, match="code a marketplace skill may not use"):
        verify_marketplace_permissions(package)


def test_skeleton_package_passes_the_code_check(skill: Path, tmp_path: Path) -> None:
    # Its test file uses importlib, but only the entry module can ever run.
    package = build_skill_package(skill, tmp_path / "greeter.zip")
    assert verify_marketplace_permissions(package).manifest.name == "greeter"
