"""Which schemas take the constrained-choice path on the local model (the rest use a grammar)."""

from __future__ import annotations

from typing import Any

import pytest

from core.llm.constrained import enum_options


@pytest.mark.parametrize(
    ("schema", "options"),
    [
        ({"enum": ["a", "b"]}, ["a", "b"]),
        ({"type": "string", "enum": ["x", "x", "y"]}, ["x", "y"]),
        ({"enum": [1, 2]}, None),  # not strings: the grammar handles it
        ({"type": "object", "properties": {"k": {"enum": ["a"]}}}, None),
        ({"enum": []}, None),
        (None, None),
    ],
)
def test_only_a_plain_enum_of_strings_is_a_choice(
    schema: dict[str, Any] | None, options: list[str] | None
) -> None:
    assert enum_options(schema) == options
