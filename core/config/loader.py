"""Reads the YAML file, applies environment overrides, validates, explains failures in one line."""

from __future__ import annotations

import difflib
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ValidationError

from core.config.secrets_file import SECRETS_FILE, read_secrets
from core.config.settings import Settings
from core.errors import ConfigError

DEFAULT_CONFIG = Path("config/lancelot.yaml")
DEFAULT_HOME = Settings.model_fields["home"].default

# The short environment names (docs/settings.md) and the key each sets.
ENV_NAMES: dict[str, tuple[str, ...]] = {
    "LANCELOT_HOME": ("home",),
    "LANCELOT_SECRET": ("secret",),
    "LANCELOT_LOG_LEVEL": ("log_level",),
    "TELEGRAM_BOT_TOKEN": ("telegram", "bot_token"),
    "TELEGRAM_OWNER_ID": ("telegram", "owner_ids"),
    "TELEGRAM_API_BASE_URL": ("telegram", "api_base_url"),
    "TELEGRAM_WEBHOOK_URL": ("telegram", "webhook_url"),
    "TELEGRAM_WEBHOOK_SECRET": ("telegram", "webhook_secret"),
    "GCHAT_AUDIENCE": ("gchat", "audience"),
    "GCHAT_OWNER_EMAIL": ("gchat", "owner_email"),
    "GCHAT_SERVICE_ACCOUNT_FILE": ("gchat", "service_account_file"),
    "GCHAT_SPACE": ("gchat", "space"),
    "GCHAT_WEBHOOK_URL": ("gchat", "webhook_url"),
    "LANCELOT_WEB_HOST": ("web", "host"),
    "LANCELOT_WEB_PORT": ("web", "port"),
    "LANCELOT_PUBLIC_URL": ("web", "public_url"),
    "LANCELOT_PROVIDER": ("llm", "provider"),
    "LANCELOT_LOCAL_MODEL": ("llm", "local_model"),
    "OPENAI_API_KEY": ("llm", "openai_api_key"),
    "OPENAI_BASE_URL": ("llm", "openai_base_url"),
    "ANTHROPIC_API_KEY": ("llm", "anthropic_api_key"),
    "ANTHROPIC_BASE_URL": ("llm", "anthropic_base_url"),
    "GEMINI_API_KEY": ("llm", "gemini_api_key"),
    "GEMINI_BASE_URL": ("llm", "gemini_base_url"),
    "LANCELOT_SANDBOX_IMAGE": ("sandbox", "image"),
}


def _generic_env_names(
    model: type[BaseModel], prefix: tuple[str, ...] = ()
) -> dict[str, tuple[str, ...]]:
    """LANCELOT_<SECTION>_<KEY> for every key, so any setting can come from the environment."""
    names: dict[str, tuple[str, ...]] = {}
    for key, info in model.model_fields.items():
        path = (*prefix, key)
        annotation = info.annotation
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            names.update(_generic_env_names(annotation, path))
        else:
            names["LANCELOT_" + "_".join(path).upper()] = path
    return names


def _set_path(data: dict[str, Any], path: tuple[str, ...], value: str) -> None:
    node = data
    for key in path[:-1]:
        child = node.get(key)
        if not isinstance(child, dict):
            child = {}
            node[key] = child
        node = child
    node[path[-1]] = value


# LANCELOT_* names read outside the settings model.
OTHER_NAMES = frozenset({"LANCELOT_CONFIG"})


def _read_yaml(path: Path, *, required: bool) -> dict[str, Any]:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        if required:  # a file named on purpose and missing is a mistake, not "use defaults"
            raise ConfigError(f"{path}: no such settings file") from None
        return {}
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read: {exc}") from None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(exc, "problem", None) or "invalid YAML"
        raise ConfigError(f"{path}:{where}: {problem}") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: the top level must be a mapping of settings")
    return data


def _env_source(loc: tuple[int | str, ...], sources: Mapping[tuple[str, ...], str]) -> str | None:
    """The environment variable that set the key at `loc` (or a key above it), if one did."""
    for length in range(len(loc), 0, -1):
        name = sources.get(tuple(str(part) for part in loc[:length]))
        if name is not None:
            return name
    return None


def _describe(
    error: ValidationError, path: Path, sources: Mapping[tuple[str, ...], str] | None = None
) -> str:
    first = error.errors()[0]
    key = ".".join(str(part) for part in first["loc"]) or "(top level)"
    env_name = _env_source(tuple(first["loc"]), sources or {})
    message = first["msg"]
    if first["type"] == "extra_forbidden":
        message = "unknown key"
    elif "input" in first and not isinstance(first["input"], dict | list):
        shown = "<hidden>" if any(w in key for w in ("token", "secret", "key")) else first["input"]
        message = f"{message} (got {shown!r})"
    more = len(error.errors()) - 1
    suffix = f" (and {more} more problem{'s' if more > 1 else ''})" if more else ""
    if env_name is not None:
        return f"environment variable {env_name} (sets {key}): {message}{suffix}"
    return f"{path}: {key}: {message}{suffix}"


def environment_names() -> dict[str, tuple[str, ...]]:
    """Every environment variable a setting is read from, and the key it sets: the short
    documented names and LANCELOT_<SECTION>_<KEY> for every key (docs/settings.md lists them)."""
    return {**_generic_env_names(Settings), **ENV_NAMES}


def unknown_environment(environ: Mapping[str, str] | None = None) -> list[str]:
    """A warning for each LANCELOT_* variable no setting reads, naming the closest known one."""
    env = os.environ if environ is None else environ
    known = {*environment_names(), *OTHER_NAMES}
    # Compared without the prefix every name shares, which would make all of them look close.
    tails = sorted(name.removeprefix("LANCELOT_") for name in known if name.startswith("LANCELOT_"))
    warnings = []
    for name in sorted(env):
        if not name.startswith("LANCELOT_") or name in known:
            continue
        close = difflib.get_close_matches(name.removeprefix("LANCELOT_"), tails, n=1, cutoff=0.6)
        hint = f" (did you mean LANCELOT_{close[0]}?)" if close else ""
        warnings.append(f"{name} is not a setting Lancelot knows{hint}; it is ignored")
    return warnings


def load_settings(path: Path | None = None, environ: Mapping[str, str] | None = None) -> Settings:
    """Load settings from `path` (or $LANCELOT_CONFIG, or config/lancelot.yaml) and the environment.

    Raises ConfigError with one line naming the file (or the environment variable), the key
    and what is wrong. Only the default file may be missing (then the defaults apply). The
    provider keys `lancelot setup` kept in LANCELOT_HOME/secrets.env count as environment
    variables that the real environment overrides.
    """
    env = os.environ if environ is None else environ
    named = path or (Path(env["LANCELOT_CONFIG"]) if env.get("LANCELOT_CONFIG") else None)
    config_path = named or DEFAULT_CONFIG
    data = _read_yaml(config_path, required=named is not None)
    sources: dict[tuple[str, ...], str] = {}
    kept = read_secrets(Path(str(env.get("LANCELOT_HOME") or data.get("home") or DEFAULT_HOME)))
    for name, key_path in environment_names().items():
        value = env.get(name) or kept.get(name)  # the environment wins over secrets.env
        if value is not None and value != "":
            _set_path(data, key_path, value)
            sources[key_path] = name if env.get(name) else f"{name} in {SECRETS_FILE}"
    try:
        return Settings.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(_describe(exc, config_path, sources)) from None
