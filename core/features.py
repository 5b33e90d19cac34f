"""FEATURE_* kill switches, read from the environment and reloadable at runtime."""

from __future__ import annotations

import os
from collections.abc import Mapping

TRUTHY = frozenset({"true", "1", "yes", "on"})
FALSY = frozenset({"false", "0", "no", "off"})

# Defaults when the environment says nothing. Risky powers start off.
DEFAULTS: dict[str, bool] = {
    "SOUL": True,
    "SKILLS": True,
    "SCHEDULER": True,
    "HEALTH": True,
    "MEMORY": True,
    "AGENT": True,
    "LOCAL_MODEL": True,  # the local GGUF model (when the `local` extra or a file is there)
    "CRUSADER": True,
    "UNIFIED_CLASSIFICATION": False,
    "DEEP_REASONING_LOOP": False,
    "TOOLS_HOST_EXECUTION": False,
    "TOOLS_NETWORK": False,
}


class FeatureFlags:
    """Named on/off switches; `reload()` re-reads the environment (wired to SIGHUP)."""

    def __init__(self, environ: Mapping[str, str] | None = None) -> None:
        self._environ = environ
        self._values: dict[str, bool] = {}
        self.reload()

    def reload(self) -> dict[str, bool]:
        """Re-read FEATURE_* from the environment; return the flags that changed."""
        env = os.environ if self._environ is None else self._environ
        values = dict(DEFAULTS)
        for name, raw in env.items():
            if not name.startswith("FEATURE_"):
                continue
            word = raw.strip().lower()
            if word in TRUTHY or word in FALSY:
                values[name.removeprefix("FEATURE_")] = word in TRUTHY
        changed = {k: v for k, v in values.items() if self._values.get(k) != v}
        self._values = values
        return changed

    def enabled(self, name: str) -> bool:
        """Whether FEATURE_<name> is on; unknown names are off."""
        return self._values.get(name.upper().removeprefix("FEATURE_"), False)

    def snapshot(self) -> dict[str, bool]:
        """All known flags and their values."""
        return dict(sorted(self._values.items()))
