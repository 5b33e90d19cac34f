"""Manifests are validated before any skill code is imported."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from core.skills.manifest import (
    InputError,
    ManifestError,
    load_manifest,
    parse_manifest,
    validate_inputs,
)
from core.skills.permissions import Permission
from tests.conftest import REPO
from tests.core.skills.builder import EXPLODES_ON_IMPORT, manifest, write_skill

BAD_MANIFESTS = {
    "bad yaml": {"raw_manifest": "name: [unclosed\n  version: 1"},
    "not a mapping": {"raw_manifest": "- just\n- a list\n"},
    "missing permissions": {"permissions": None},
    "missing entry point": {"entry_point": None},
    "entry point without function": {"entry_point": "skill"},
    "entry point with a path": {"entry_point": "../evil:run"},
    "entry file missing": {"entry_point": "nothere:run"},
    "unknown permission": {"permissions": ["read_input", "root_access"]},
    "unknown risk": {"risk": "T9"},
    "unknown key": {"surprise": True},
    "bad name": {"name": "Bad-Name"},
    "bad version": {"version": "one"},
    "endless timeout": {"timeout_seconds": 100000},
    "unknown field type": {"inputs": {"x": {"type": "blob"}}},
}


@pytest.mark.parametrize("broken", BAD_MANIFESTS.values(), ids=BAD_MANIFESTS.keys())
def test_invalid_manifest_is_refused_and_code_never_imported(
    tmp_path: Path, broken: dict[str, object]
) -> None:
    raw = broken.get("raw_manifest")
    if not isinstance(raw, str):
        data = {**manifest("exploder"), **broken}
        raw = _dump({k: v for k, v in data.items() if v is not None})
    folder = write_skill(tmp_path, "exploder", EXPLODES_ON_IMPORT, raw_manifest=raw)
    with pytest.raises(ManifestError) as caught:
        load_manifest(folder)
    assert "skill.yaml" in str(caught.value)
    assert not (folder / "IMPORTED").exists()


def _dump(data: dict[str, object]) -> str:
    return yaml.safe_dump(data)


def test_missing_manifest_file(tmp_path: Path) -> None:
    with pytest.raises(ManifestError, match="cannot read"):
        load_manifest(tmp_path)


def test_every_shipped_skill_has_a_valid_manifest() -> None:
    names = []
    for path in sorted((REPO / "skills").glob("*/skill.yaml")):
        names.append(load_manifest(path.parent).name)
    assert names == ["command_runner", "network_client", "repo_writer", "service_runner"]


def test_manifest_fields_are_typed() -> None:
    parsed = parse_manifest(_dump(manifest("typed", scheduling={"eligible": True})))
    assert parsed.permissions == (Permission.READ_INPUT, Permission.WRITE_OUTPUT)
    assert parsed.scheduling.eligible
    assert (parsed.entry_module, parsed.entry_function) == ("skill", "run")


def test_inputs_are_checked_and_defaulted() -> None:
    parsed = parse_manifest(
        _dump(
            manifest(
                "typed",
                inputs={
                    "count": {"type": "integer", "required": True},
                    "mode": {"type": "string", "default": "fast"},
                },
            )
        )
    )
    assert validate_inputs(parsed, {"count": 3}) == {"count": 3, "mode": "fast"}
    for args, message in (
        ({}, "needs the input 'count'"),
        ({"count": "3"}, "must be integer"),
        ({"count": True}, "must be integer"),
        ({"count": 1, "other": 2}, "no input named other"),
    ):
        with pytest.raises(InputError, match=message):
            validate_inputs(parsed, args)
