"""skill.yaml: the manifest, parsed and validated before any of the skill's code is imported."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from core.errors import PermanentError
from core.skills.permissions import Permission

MANIFEST = "skill.yaml"
MAX_MANIFEST_BYTES = 64 * 1024
TIERS = ("T0", "T1", "T2", "T3")

NAME_PATTERN = r"^[a-z][a-z0-9_]{1,39}$"
_IDENT = r"[A-Za-z_][A-Za-z0-9_]*"
ENTRY_POINT = rf"^{_IDENT}(\.{_IDENT})*:{_IDENT}$"

FieldType = Literal["string", "integer", "number", "boolean", "object", "array"]
_PYTHON_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "object": (dict,),
    "array": (list,),
}


# libyaml's safe loader when present: ten times faster, and manifests are read on every run.
_SafeLoader: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class ManifestError(PermanentError):
    """A skill.yaml is missing, unreadable or invalid; nothing of the skill was imported."""


class InputError(PermanentError):
    """Arguments given to a skill do not fit its manifest's inputs."""


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class FieldSpec(_Model):
    """One typed input or output."""

    type: FieldType
    required: bool = False
    description: str = ""
    default: Any = None


class Scheduling(_Model):
    """Whether the scheduler may run this skill with nobody asking."""

    eligible: bool = False


class SkillManifest(_Model):
    """What a skill is, what it may do, and where its code starts."""

    name: str = Field(pattern=NAME_PATTERN)
    version: str = Field(pattern=r"^\d+\.\d+\.\d+$")
    description: str = Field(min_length=1, max_length=500)
    permissions: tuple[Permission, ...]
    inputs: dict[str, FieldSpec] = Field(default_factory=dict)
    outputs: dict[str, FieldSpec] = Field(default_factory=dict)
    risk: Literal["T0", "T1", "T2", "T3"]
    scheduling: Scheduling = Field(default_factory=Scheduling)
    entry_point: str = Field(pattern=ENTRY_POINT)
    timeout_seconds: float = Field(default=30.0, gt=0, le=600)
    config: dict[str, Any] = Field(default_factory=dict)

    @field_validator("permissions")
    @classmethod
    def _unique(cls, value: tuple[Permission, ...]) -> tuple[Permission, ...]:
        if len(set(value)) != len(value):
            raise ValueError("a permission is listed twice")
        return value

    @property
    def entry_module(self) -> str:
        """The dotted module part of the entry point, relative to the skill's folder."""
        return self.entry_point.partition(":")[0]

    @property
    def entry_function(self) -> str:
        """The function the entry point names."""
        return self.entry_point.partition(":")[2]

    def entry_file(self, folder: Path) -> Path:
        """The entry module's file inside `folder`."""
        return folder.joinpath(*self.entry_module.split(".")).with_suffix(".py")


def parse_manifest(text: str, origin: str = MANIFEST) -> SkillManifest:
    """Validate manifest text; raise ManifestError naming the first problem."""
    try:
        data = yaml.load(text, Loader=_SafeLoader)  # noqa: S506 - a safe loader
    except yaml.YAMLError as exc:
        raise ManifestError(f"{origin}: not valid YAML: {getattr(exc, 'problem', exc)}") from None
    if not isinstance(data, dict):
        raise ManifestError(f"{origin}: must be a mapping of keys to values")
    try:
        return SkillManifest.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "(top)"
        raise ManifestError(f"{origin}: {where}: {first['msg']}") from None


def load_manifest(folder: Path) -> SkillManifest:
    """Read and validate `folder/skill.yaml`, and check its entry file is in the folder."""
    path = folder / MANIFEST
    try:
        if path.stat().st_size > MAX_MANIFEST_BYTES:
            raise ManifestError(f"{path}: larger than {MAX_MANIFEST_BYTES} bytes")
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ManifestError(f"{path}: cannot read: {exc}") from None
    manifest = parse_manifest(text, str(path))
    entry = manifest.entry_file(folder)
    root = folder.resolve()
    if not entry.is_file() or not entry.resolve().is_relative_to(root):
        raise ManifestError(f"{path}: entry_point: no file {entry.name} inside the skill folder")
    return manifest


def validate_inputs(manifest: SkillManifest, args: dict[str, Any]) -> dict[str, Any]:
    """The arguments checked against the manifest's inputs, with defaults filled in."""
    unknown = sorted(set(args) - set(manifest.inputs))
    if unknown:
        raise InputError(f"{manifest.name} takes no input named {', '.join(unknown)}")
    values: dict[str, Any] = {}
    for name, spec in manifest.inputs.items():
        if name not in args:
            if spec.required:
                raise InputError(f"{manifest.name} needs the input {name!r} ({spec.type})")
            if spec.default is not None:
                values[name] = spec.default
            continue
        check_type(name, spec, args[name], InputError)
        values[name] = args[name]
    return values


def check_type(name: str, spec: FieldSpec, value: Any, error: type[Exception]) -> None:
    """Raise `error` unless `value` has the spec's type (a bool is not a number)."""
    wanted = _PYTHON_TYPES[spec.type]
    is_bool = isinstance(value, bool)
    if not isinstance(value, wanted) or (is_bool and spec.type != "boolean"):
        raise error(f"{name!r} must be {spec.type}, not {type(value).__name__}")


def tier_rank(tier: str) -> int:
    """T0 -> 0 ... T3 -> 3 (unknown tiers rank as T3)."""
    return TIERS.index(tier) if tier in TIERS else len(TIERS) - 1
