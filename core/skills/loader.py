"""Imports a skill's entry point from its folder, only after its manifest was validated."""

from __future__ import annotations

import importlib.util
import inspect
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from core.skills.manifest import SkillManifest

EntryPoint = Callable[[Any], Any]


class LoadFailed(Exception):
    """The entry module did not import, or does not define the entry function."""


def load_entry(manifest: SkillManifest, folder: Path, digest: str) -> EntryPoint:
    """The entry function. Each (skill, content hash) is its own module, so new code is
    never mixed with old. Blocking: call it in a thread."""
    module_name = f"lancelot_skill_{manifest.name}_{digest[:16]}_{manifest.entry_module}"
    module = sys.modules.get(module_name)
    if module is None:
        spec = importlib.util.spec_from_file_location(module_name, manifest.entry_file(folder))
        if spec is None or spec.loader is None:
            raise LoadFailed(f"cannot load {manifest.entry_module}")
        module = importlib.util.module_from_spec(spec)
        sys.modules[module_name] = module
        try:
            spec.loader.exec_module(module)
        except BaseException as exc:
            del sys.modules[module_name]
            raise LoadFailed(f"importing {manifest.entry_module} raised {exc!r}") from exc
    function = getattr(module, manifest.entry_function, None)
    if not callable(function):
        raise LoadFailed(f"{manifest.entry_module} defines no function {manifest.entry_function}")
    return function  # type: ignore[no-any-return]


def is_async(function: EntryPoint) -> bool:
    """Whether the entry point is a coroutine function (else it runs in a thread)."""
    return inspect.iscoroutinefunction(function)
