"""Which schemas take the constrained-choice path on the local model (the rest use a grammar)."""

from __future__ import annotations

from typing import Any

import pytest

from core.llm.constrained import enum_options, enum_shape


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


INTENTS = ["PLAN_REQUEST", "EXEC_REQUEST"]


@pytest.mark.parametrize(
    ("schema", "field"),
    [
        ({"enum": INTENTS}, None),
        (
            {
                "type": "object",
                "properties": {"intent": {"type": "string", "enum": INTENTS}},
                "required": ["intent"],
                "additionalProperties": False,
            },
            "intent",
        ),
    ],
)
def test_a_label_alone_or_in_a_one_field_object_is_a_choice(
    schema: dict[str, Any], field: str | None
) -> None:
    shape = enum_shape(schema)
    assert shape is not None
    assert (shape.options, shape.field) == (INTENTS, field)
    expected = '"EXEC_REQUEST"' if field is None else '{"intent": "EXEC_REQUEST"}'
    assert shape.wrap('"EXEC_REQUEST"') == expected


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "object", "properties": {"intent": {"enum": INTENTS}}},  # not required
        {
            "type": "object",
            "properties": {"intent": {"enum": INTENTS}, "why": {"type": "string"}},
            "required": ["intent"],
        },
    ],
)
def test_other_objects_go_to_the_grammar(schema: dict[str, Any]) -> None:
    assert enum_shape(schema) is None
