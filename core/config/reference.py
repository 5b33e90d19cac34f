"""docs/settings.md, written from the settings model: every key, the environment variables
the loader reads it from, its default and its docstring. `python -m core.config.reference`
prints it; a test fails when the checked-in file differs."""

from __future__ import annotations

import ast
import inspect
import itertools
import sys
from collections import defaultdict
from typing import Any

from pydantic import BaseModel, SecretStr
from pydantic.fields import FieldInfo

from core.config.loader import ENV_NAMES, environment_names
from core.config.settings import Settings
from core.features import AT_START, DEFAULTS, NO_COUNTERPART, PREFIX, SPEC_NAMES

INTRO = """\
# Settings

<!-- Written by `python -m core.config.reference > docs/settings.md` from
core/config/settings.py; edit the docstrings there, not this file. -->

Settings come from `config/lancelot.yaml` (or the file in `$LANCELOT_CONFIG`); any key can be
overridden from the environment, by the names below. A key `section.key` is also read from
`LANCELOT_<SECTION>_<KEY>` (for example `LANCELOT_LIMITS_RATE_PER_MINUTE=30`). A broken file,
an unknown key or a bad value stops startup with one line naming the file, the key and the
problem (exit code 2); a bad value that came from the environment names the variable instead of
the file. A file named with `--config` or `LANCELOT_CONFIG` must exist (only the default
`config/lancelot.yaml` may be missing, and then the defaults apply). A `LANCELOT_*` variable
that is no setting is named in a warning with the closest one (`LANCELOT_WEB_PROT ... did you
mean LANCELOT_WEB_PORT?`). Provider keys kept by `lancelot setup` in
`LANCELOT_HOME/secrets.env` count as environment variables; the real environment wins over
them.

Secrets are never logged (every log line is redacted), never stored in receipts, and never put
in a URL that persists.
"""

FEATURES = """\
## Switches

`FEATURE_<NAME>` switches take `true/1/yes/on` or `false/0/no/off`; anything else, or an
unknown name in a file, stops startup in one line. They can also go under `features:` in the
settings file (`crusader: false`); the environment overrides the file and
`LANCELOT_HOME/features.env` (what `/features` writes) overrides both. `kill -HUP` reads the
settings file and `features.env` again and applies them to the running process (a typo there
is logged and changes nothing); the switches marked "at start" apply at the next start.

| switch | default | applies |
|---|---|---|
"""


SPEC = """\
### The specification's names

The functional specification names some switches differently. These switch exactly what the
Lancelot name does, in any source; the ones with no counterpart are accepted when on (what
they turn on already holds) and stop startup when off, saying what to use instead.

| specification name | in Lancelot |
|---|---|
"""


def _spec_rows() -> list[str]:
    same = [f"| `{PREFIX}{spec}` | `{PREFIX}{ours}` |" for spec, ours in SPEC_NAMES.items()]
    none = [f"| `{PREFIX}{spec}` | none: {why} |" for spec, why in NO_COUNTERPART.items()]
    return same + none


def _names_by_key() -> dict[tuple[str, ...], list[str]]:
    """The environment names of each key, the short documented one first."""
    names: dict[tuple[str, ...], list[str]] = defaultdict(list)
    for name, path in environment_names().items():
        names[path].append(name)
    for found in names.values():
        found.sort(key=lambda name: (name not in ENV_NAMES, name))
    return names


def _default(info: FieldInfo) -> str:
    """The default as a reader would write it: unset, a comma list, a plain value."""
    value: Any = info.get_default(call_default_factory=True)
    if value is None or isinstance(value, SecretStr):
        return "unset"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, tuple | list):
        return f"`{', '.join(str(item) for item in value)}`" if value else "none"
    if isinstance(value, dict):
        return "none" if not value else f"`{value}`"
    return f"`{value}`"


def attribute_docstrings(model: type[BaseModel]) -> dict[str, str]:
    """The string literal written under each annotated attribute of `model`'s class body
    (and its bases' within the project), by key."""
    found: dict[str, str] = {}
    for cls in reversed(model.__mro__):
        if cls.__module__.startswith("core.") and issubclass(cls, BaseModel):
            found |= _docstrings_in(ast.parse(inspect.getsource(cls)).body[0])
    return found


def _docstrings_in(node: ast.stmt) -> dict[str, str]:
    body = node.body if isinstance(node, ast.ClassDef) else []
    found = {}
    for statement, following in itertools.pairwise(body):
        if (
            isinstance(statement, ast.AnnAssign)
            and isinstance(statement.target, ast.Name)
            and isinstance(following, ast.Expr)
            and isinstance(following.value, ast.Constant)
            and isinstance(following.value.value, str)
        ):
            found[statement.target.id] = inspect.cleandoc(following.value.value)
    return found


def _description(docstrings: dict[str, str], key: str) -> str:
    """The key's docstring on one line (a table cell)."""
    return " ".join(docstrings.get(key, "").split())


def _section_rows(
    model: type[BaseModel], prefix: tuple[str, ...], names: dict[tuple[str, ...], list[str]]
) -> list[str]:
    """One table row for each plain key of `model` (sections get tables of their own)."""
    rows = []
    docstrings = attribute_docstrings(model)
    for key, info in model.model_fields.items():
        if isinstance(info.annotation, type) and issubclass(info.annotation, BaseModel):
            continue
        path = (*prefix, key)
        env = ", ".join(f"`{name}`" for name in names[path])
        meaning = _description(docstrings, key)
        rows.append(f"| `{'.'.join(path)}` | {env} | {_default(info)} | {meaning} |")
    return rows


def _table(title: str, rows: list[str]) -> str:
    head = "| key | environment | default | meaning |\n|---|---|---|---|\n"
    return f"## {title}\n\n{head}" + "\n".join(rows) + "\n"


def _switch_rows() -> list[str]:
    return [
        f"| `{PREFIX}{name}` | {'on' if on else 'off'} | "
        f"{'at start' if name in AT_START else 'at once'} |"
        for name, on in DEFAULTS.items()
    ]


def render_reference() -> str:
    """docs/settings.md as the settings model and the loader define it now."""
    names = _names_by_key()
    parts = [INTRO, _table("General", _section_rows(Settings, (), names))]
    for key, info in Settings.model_fields.items():
        section = info.annotation
        if isinstance(section, type) and issubclass(section, BaseModel):
            title = f"`{key}`: {' '.join((section.__doc__ or '').split())}"
            parts.append(_table(title, _section_rows(section, (key,), names)))
    parts.append(FEATURES + "\n".join(_switch_rows()) + "\n")
    parts.append(SPEC + "\n".join(_spec_rows()) + "\n")
    return "\n".join(parts)


if __name__ == "__main__":
    sys.stdout.write(render_reference())
