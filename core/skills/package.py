"""Skill packages: a folder's content hash, the .zip format, its signature and its checks."""

from __future__ import annotations

import hashlib
import io
import stat
import zipfile
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path, PurePosixPath

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from pydantic import BaseModel, ConfigDict, ValidationError

from core.errors import PermanentError
from core.skills.codecheck import code_problems
from core.skills.manifest import MANIFEST, ManifestError, SkillManifest, parse_manifest
from core.skills.permissions import MARKETPLACE_BASE, Permission

PACKAGE_INFO = "PACKAGE.json"
MAX_FILES = 200
MAX_TOTAL_BYTES = 2 * 1024 * 1024
SKIPPED_PARTS = frozenset({"__pycache__", ".pytest_cache"})


class SignatureState(StrEnum):
    """How much a package's origin is known."""

    UNSIGNED = "UNSIGNED"  # no signature
    SIGNED = "SIGNED"  # a valid signature by a key the owner does not trust (yet)
    VERIFIED = "VERIFIED"  # a valid signature by a trusted publisher key


class PackageRejected(PermanentError):
    """A package failed a check; nothing of it was installed or imported."""


class _Signature(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    algorithm: str
    public_key: str
    value: str


class _Info(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    format: int
    files: dict[str, str]
    digest: str
    signature: _Signature | None = None


@dataclass(frozen=True, slots=True)
class PackageReport:
    """A package that passed every check."""

    manifest: SkillManifest
    digest: str
    signature: SignatureState
    files: dict[str, bytes]


def digest_of(hashes: dict[str, str]) -> str:
    """The content hash of a skill: sha256 over its sorted (path, file sha256) pairs."""
    listing = "".join(f"{path}\0{hashes[path]}\n" for path in sorted(hashes))
    return hashlib.sha256(listing.encode()).hexdigest()


def folder_files(folder: Path) -> dict[str, bytes]:
    """The files that make up a skill (manifest, code, tests), by POSIX relative path."""
    files: dict[str, bytes] = {}
    for path in sorted(folder.rglob("*")):
        relative = path.relative_to(folder)
        if SKIPPED_PARTS & set(relative.parts) or path.suffix == ".pyc" or path.is_dir():
            continue
        if path.is_symlink():
            raise ManifestError(f"{path}: skills may not contain symlinks")
        if relative.as_posix() != PACKAGE_INFO:
            files[relative.as_posix()] = path.read_bytes()
    return files


def folder_digest(folder: Path) -> str:
    """The content hash of a skill folder (blocking: call it in a thread)."""
    files = folder_files(folder)
    return digest_of({p: hashlib.sha256(b).hexdigest() for p, b in files.items()})


def build_skill_package(
    folder: Path, out: Path, signing_key: Ed25519PrivateKey | None = None
) -> Path:
    """Write `folder` as a .zip: its files, their hashes, and an optional ed25519 signature
    over the content hash. The manifest is validated first."""
    files = folder_files(folder)
    parse_manifest(files.get(MANIFEST, b"").decode("utf-8", "replace"), str(folder / MANIFEST))
    hashes = {p: hashlib.sha256(b).hexdigest() for p, b in files.items()}
    digest = digest_of(hashes)
    signature = None
    if signing_key is not None:
        public = signing_key.public_key().public_bytes_raw().hex()
        value = signing_key.sign(bytes.fromhex(digest)).hex()
        signature = _Signature(algorithm="ed25519", public_key=public, value=value)
    info = _Info(format=1, files=hashes, digest=digest, signature=signature)
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        for path, data in sorted(files.items()):
            archive.writestr(path, data)
        archive.writestr(PACKAGE_INFO, info.model_dump_json(indent=2))
    return out


def _safe_name(info: zipfile.ZipInfo) -> str:
    name = info.filename
    pure = PurePosixPath(name)
    mode = info.external_attr >> 16
    if (
        "\\" in name
        or name.startswith("/")
        or ":" in pure.parts[0]
        or any(part in ("..", ".", "") for part in name.split("/"))
    ):
        raise PackageRejected(f"unsafe path in package: {name!r}")
    if stat.S_ISLNK(mode):
        raise PackageRejected(f"symlink in package: {name!r}")
    return name


def _read_zip(data: bytes) -> dict[str, bytes]:
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except zipfile.BadZipFile:
        raise PackageRejected("not a zip file") from None
    with archive:
        entries = [i for i in archive.infolist() if not i.is_dir()]
        if len(entries) > MAX_FILES:
            raise PackageRejected(f"more than {MAX_FILES} files")
        if sum(i.file_size for i in entries) > MAX_TOTAL_BYTES:
            raise PackageRejected(f"larger than {MAX_TOTAL_BYTES} bytes unpacked")
        files: dict[str, bytes] = {}
        for entry in entries:
            name = _safe_name(entry)
            if name in files:
                raise PackageRejected(f"duplicate entry {name!r}")
            files[name] = archive.read(entry)
    return files


def _signature_state(info: _Info, trusted: frozenset[str]) -> SignatureState:
    if info.signature is None:
        return SignatureState.UNSIGNED
    if info.signature.algorithm != "ed25519":
        raise PackageRejected(f"unknown signature algorithm {info.signature.algorithm!r}")
    try:
        key = Ed25519PublicKey.from_public_bytes(bytes.fromhex(info.signature.public_key))
        key.verify(bytes.fromhex(info.signature.value), bytes.fromhex(info.digest))
    except (InvalidSignature, ValueError):
        raise PackageRejected("the signature does not match the package") from None
    if info.signature.public_key in trusted:
        return SignatureState.VERIFIED
    return SignatureState.SIGNED


def verify_marketplace_permissions(
    package: Path,
    *,
    allowed: frozenset[Permission] = MARKETPLACE_BASE,
    trusted_keys: frozenset[str] = frozenset(),
) -> PackageReport:
    """Check a package without importing any of it: safe paths, every file's hash, the
    content hash, the signature if any, a valid manifest, and only `allowed` permissions.
    Raises PackageRejected saying what failed. (Blocking: call it in a thread.)"""
    files = _read_zip(package.read_bytes())
    try:
        info = _Info.model_validate_json(files.pop(PACKAGE_INFO, b""))
    except ValidationError:
        raise PackageRejected(f"missing or invalid {PACKAGE_INFO}") from None
    if set(files) != set(info.files):
        raise PackageRejected("the file list does not match the package's hashes")
    for path, data in files.items():
        if hashlib.sha256(data).hexdigest() != info.files[path]:
            raise PackageRejected(f"{path}: hash does not match")
    if digest_of(info.files) != info.digest:
        raise PackageRejected("the content hash does not match")
    signature = _signature_state(info, trusted_keys)
    try:
        manifest = parse_manifest(files.get(MANIFEST, b"").decode("utf-8", "replace"), MANIFEST)
    except ManifestError as exc:
        raise PackageRejected(str(exc)) from None
    if manifest.entry_file(Path()).as_posix() not in files:
        raise PackageRejected(f"entry point {manifest.entry_point} has no file in the package")
    entry = manifest.entry_file(Path()).as_posix()
    # Only allowlisted modules can be imported, so no file but the entry ever runs; a test
    # file (the factory writes one) is checked only if it is the entry.
    code = {p: d for p, d in files.items() if p == entry or not _is_test(p)}
    problems = code_problems(code)
    if problems:
        raise PackageRejected(f"code a marketplace skill may not use: {'; '.join(problems[:5])}")
    extra = sorted(str(p) for p in set(manifest.permissions) - allowed)
    if extra:
        raise PackageRejected(f"asks for permissions a marketplace skill lacks: {', '.join(extra)}")
    return PackageReport(manifest, info.digest, signature, files)


def _is_test(path: str) -> bool:
    return PurePosixPath(path).name.startswith("test_")


def unpack(report: PackageReport, dest: Path) -> None:
    """Write a verified package's files into `dest` (blocking)."""
    for name, data in report.files.items():
        target = dest.joinpath(*PurePosixPath(name).parts)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
