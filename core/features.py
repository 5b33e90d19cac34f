"""FEATURE_* switches: their defaults, then the settings file's `features:` section, the
environment and LANCELOT_HOME/features.env (the owner's own choices, written by /features).
`reload()` reads them all again (SIGHUP), so a switch can change in a running Lancelot."""

from __future__ import annotations

import difflib
import logging
import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import yaml

from core.errors import ConfigError

log = logging.getLogger(__name__)

TRUTHY = frozenset({"true", "1", "yes", "on"})
FALSY = frozenset({"false", "0", "no", "off"})
PREFIX = "FEATURE_"
ENVIRONMENT = "the environment"
FEATURES_FILE = "features.env"  # in LANCELOT_HOME: the owner's toggles, read last

# Every switch Lancelot has, and its value when nothing says otherwise. Risky powers start off.
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
    "SAFE_MODE": False,
}

# Switches read once, while Lancelot is assembled: a change applies at the next start.
AT_START = frozenset({"SOUL", "SKILLS", "MEMORY", "LOCAL_MODEL"})

# The functional specification's names for switches Lancelot has under a shorter name: each
# switches exactly what its Lancelot name does (FEATURE_MEMORY_VNEXT=false turns memory off).
SPEC_NAMES: dict[str, str] = {
    "MEMORY_VNEXT": "MEMORY",
    "HEALTH_MONITOR": "HEALTH",
    "AGENTIC_LOOP": "AGENT",
}

# The specification's switches with no counterpart here, and what to use instead. Turning one
# off would promise what Lancelot does not do, so that stops startup; on is what already holds.
NO_COUNTERPART: dict[str, str] = {
    "TOOLS_FABRIC": "the tools are always governed by the Soul; to keep the agent from "
    "acting use FEATURE_SAFE_MODE=true (local tools only) or FEATURE_SOUL=false (no tools)",
    "TOOLS_CLI_PROVIDERS": "there are no CLI tool providers; the shell runs in the sandbox",
    "TOOLS_ANTIGRAVITY": "there is no Antigravity provider",
    "CONNECTORS": "connectors are MCP servers, set in mcp.json",
    "RISK_TIERED_GOVERNANCE": "every action is tiered T0-T3 by the Soul; use FEATURE_SOUL",
    "TRUST_LEDGER": "the receipt ledger cannot be turned off",
    "BATCH_RECEIPTS": "receipts are always written in batches (group commit)",
    "APPROVAL_LEARNING": "approvals are never learned; each T3 action asks",
}

# Where a value came from, lowest precedence first (after the defaults).
Source = tuple[str, Callable[[], Mapping[str, str]]]


class FeatureError(ConfigError):
    """A switch with a value that is neither on nor off, or a name Lancelot does not know."""


def env_file(path: Path) -> Callable[[], Mapping[str, str]]:
    """NAME=value lines (blank lines and # comments skipped); a missing file is empty."""

    def read() -> Mapping[str, str]:
        try:
            text = path.read_text(encoding="utf-8")
        except (FileNotFoundError, NotADirectoryError):  # no file, or no home to hold one yet
            return {}
        except (OSError, UnicodeDecodeError) as exc:
            raise FeatureError(f"{path}: cannot read: {exc}") from None
        values: dict[str, str] = {}
        for number, line in enumerate(text.splitlines(), 1):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            name, sep, value = line.removeprefix("export ").partition("=")
            if not sep:
                raise FeatureError(f"{path}: line {number}: expected NAME=value")
            values[name.strip()] = value.strip().strip("'\"")
        return values

    return read


def settings_file(path: Path) -> Callable[[], Mapping[str, str]]:
    """The `features:` section of the settings file (`crusader: false`); a missing file or
    section is empty."""

    def read() -> Mapping[str, str]:
        try:
            data = yaml.safe_load(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}
        except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
            raise FeatureError(f"{path}: cannot read: {exc}") from None
        section = data.get("features") if isinstance(data, dict) else None
        if section is None:
            return {}
        if not isinstance(section, dict):
            raise FeatureError(f"{path}: features: must be a mapping of switch: true/false")
        return {PREFIX + str(k).upper().removeprefix(PREFIX): _word(v) for k, v in section.items()}

    return read


def _word(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def canonical(name: str) -> str:
    """A switch's key in DEFAULTS: `FEATURE_` dropped, upper case, a specification name
    (`MEMORY_VNEXT`) read as Lancelot's (`MEMORY`)."""
    key = name.upper().removeprefix(PREFIX)
    return SPEC_NAMES.get(key, key)


def _parse(origin: str, name: str, raw: str) -> bool | None:
    """The switch's value; None for a name Lancelot does not know in the environment (which
    other programs share: warned and ignored). Anywhere else an unknown name is an error,
    and so is turning off a specification switch Lancelot has no counterpart for."""
    key = canonical(name)
    if key in NO_COUNTERPART:
        _no_counterpart(origin, name, key, raw)
        return None
    if key not in DEFAULTS:
        message = f"{origin}: {_unknown(name)}"
        if origin == ENVIRONMENT:
            log.warning("%s (ignored)", message)
            return None
        raise FeatureError(message)
    return _truth(origin, name, raw)


def _unknown(name: str) -> str:
    close = difflib.get_close_matches(canonical(name), DEFAULTS, n=1)
    hint = f"; did you mean {PREFIX}{close[0]}?" if close else ""
    return f"{name} is not one of Lancelot's switches{hint}"


def unknown_switches(environ: Mapping[str, str] | None = None) -> list[str]:
    """A line for each FEATURE_* variable of the environment that switches nothing here."""
    env = os.environ if environ is None else environ
    known = {*DEFAULTS, *NO_COUNTERPART}
    return [
        f"{_unknown(name)}; it is ignored"
        for name in sorted(env)
        if name.startswith(PREFIX) and canonical(name) not in known
    ]


def _truth(origin: str, name: str, raw: str) -> bool:
    word = raw.strip().lower()
    if word not in TRUTHY and word not in FALSY:
        raise FeatureError(f"{origin}: {name}={raw!r} is neither true/1/yes/on nor false/0/no/off")
    return word in TRUTHY


def _no_counterpart(origin: str, name: str, key: str, raw: str) -> None:
    """A specification switch Lancelot lacks: on is noted and ignored (it already holds);
    off raises FeatureError, saying what to use instead."""
    if not _truth(origin, name, raw):
        raise FeatureError(f"{origin}: {name}=off does nothing in Lancelot: {NO_COUNTERPART[key]}")
    log.info("%s: %s has no counterpart in Lancelot (%s)", origin, name, NO_COUNTERPART[key])


class FeatureFlags:
    """Named on/off switches.

    `environ` alone (tests) reads just that mapping. `sources` adds layers read at every
    `reload()`, each overriding the ones before it; `store` is the features.env file that
    `set()` writes (the owner's toggles), read last so a toggle survives a restart.
    """

    def __init__(
        self,
        environ: Mapping[str, str] | None = None,
        *,
        sources: Sequence[Source] = (),
        store: Path | None = None,
    ) -> None:
        self._store = store
        self._chosen: dict[str, str] = {}  # toggles when there is no store
        env: Source = (ENVIRONMENT, lambda: os.environ if environ is None else environ)
        last: Source = (str(store), env_file(store)) if store else ("chat", lambda: self._chosen)
        self._sources: tuple[Source, ...] = (*sources, env, last)
        self._values: dict[str, bool] = {}
        self._origins: dict[str, str] = {}
        self.reload()

    @property
    def store(self) -> Path | None:
        """Where `set()` keeps the owner's choices (None: they last until the process ends)."""
        return self._store

    def reload(self) -> dict[str, bool]:
        """Read every source again; return the switches that changed. A bad value anywhere
        raises FeatureError and changes nothing."""
        values, origins = dict(DEFAULTS), dict.fromkeys(DEFAULTS, "default")
        for origin, read in self._sources:
            for name, raw in read().items():
                value = _parse(origin, name, raw) if name.startswith(PREFIX) else None
                if value is not None:
                    values[canonical(name)] = value
                    origins[canonical(name)] = origin
        changed = {k: v for k, v in values.items() if self._values.get(k) != v}
        self._values, self._origins = values, origins
        return changed

    def enabled(self, name: str) -> bool:
        """Whether FEATURE_<name> is on; unknown names are off."""
        return self._values.get(canonical(name), False)

    def snapshot(self) -> dict[str, bool]:
        """All known flags and their values."""
        return dict(sorted(self._values.items()))

    def origin(self, name: str) -> str:
        """Which source decided a switch: default, the settings file, the environment, or
        the features.env file."""
        return self._origins.get(canonical(name), "default")

    def set(self, name: str, on: bool) -> None:
        """Switch one flag now and keep the choice in the store (features.env, 0600)."""
        key = canonical(name)
        if key not in DEFAULTS:
            raise FeatureError(f"{PREFIX}{key} is not one of Lancelot's switches")
        if self._store is None:
            self._chosen[PREFIX + key] = "true" if on else "false"
            self.reload()
            return
        kept = [
            line
            for line in _lines(self._store)
            if line.strip().removeprefix("export ").partition("=")[0].strip() != PREFIX + key
        ]
        kept.append(f"{PREFIX}{key}={'true' if on else 'false'}")
        _write_private(self._store, "\n".join(kept) + "\n")
        self.reload()


def _lines(path: Path) -> list[str]:
    try:
        return path.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        return ["# Lancelot's switches, as set from /features (NAME=true|false)"]


def _write_private(path: Path, text: str) -> None:
    """Replace `path` at once (a crash leaves the old file or the new one, never half)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        out.write(text)
        out.flush()
        os.fsync(out.fileno())
    os.replace(tmp, path)
    log.info("feature switches saved to %s", path)


def owner_switches(home: Path, config: Path) -> FeatureFlags:
    """The switches as Lancelot runs them: the settings file's `features:`, the environment,
    then the home's features.env (the owner's toggles), each overriding the one before.
    FeatureError (one line naming where) for a value that is neither on nor off."""
    return FeatureFlags(sources=[(str(config), settings_file(config))], store=home / FEATURES_FILE)
