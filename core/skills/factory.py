"""The skill factory: a skeleton (manifest, code, test) to start from, and packages."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

from core.skills.manifest import MANIFEST, NAME_PATTERN, ManifestError, load_manifest
from core.skills.package import build_skill_package, verify_marketplace_permissions
from core.skills.permissions import Permission

__all__ = ["build_skill_package", "generate_skeleton", "verify_marketplace_permissions"]

_CODE = '''"""{description}"""

from __future__ import annotations

from core.skills.api import SkillContext


async def run(ctx: SkillContext) -> None:
    """Echo the input text back as the output."""
    ctx.write_output("text", str(ctx.read_input("text")))
'''

_TEST = '''"""The {name} skill, run against a minimal context."""

from __future__ import annotations

import asyncio
import importlib.util
import re
from pathlib import Path
from typing import Any


class _Context:
    skill_name = "{name}"

    def __init__(self, inputs: dict[str, Any]) -> None:
        self.inputs = inputs
        self.outputs: dict[str, Any] = {{}}

    def read_input(self, name: str | None = None) -> Any:
        return self.inputs if name is None else self.inputs.get(name)

    def write_output(self, name: str, value: Any) -> None:
        self.outputs[name] = value


def test_echoes_its_input() -> None:
    code = Path(__file__).with_name("skill.py")
    spec = importlib.util.spec_from_file_location("{name}_skill", code)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    ctx = _Context({{"text": "hello"}})
    asyncio.run(module.run(ctx))
    assert ctx.outputs == {{"text": "hello"}}
'''


def generate_skeleton(
    name: str,
    dest: Path,
    description: str = "A new skill.",
    permissions: tuple[Permission, ...] = (Permission.READ_INPUT, Permission.WRITE_OUTPUT),
    risk: str = "T0",
) -> Path:
    """Write `dest/name/` with skill.yaml, skill.py and test_skill.py; return the folder.
    The manifest is validated before returning (ManifestError if `name` is not valid)."""
    if not re.fullmatch(NAME_PATTERN, name):
        raise ManifestError(f"{name!r}: a skill name is 2-40 lowercase letters, digits or _")
    folder = dest / name
    folder.mkdir(parents=True, exist_ok=False)
    manifest = {
        "name": name,
        "version": "0.1.0",
        "description": description,
        "permissions": [str(p) for p in permissions],
        "inputs": {"text": {"type": "string", "required": True, "description": "what to echo"}},
        "outputs": {"text": {"type": "string", "required": True}},
        "risk": risk,
        "scheduling": {"eligible": False},
        "entry_point": "skill:run",
        "timeout_seconds": 10,
    }
    (folder / MANIFEST).write_text(yaml.safe_dump(manifest, sort_keys=False), encoding="utf-8")
    docstring = description.replace('"""', "'''").replace("\\", "/")
    (folder / "skill.py").write_text(_CODE.format(description=docstring), encoding="utf-8")
    (folder / "test_skill.py").write_text(_TEST.format(name=name), encoding="utf-8")
    load_manifest(folder)
    return folder
