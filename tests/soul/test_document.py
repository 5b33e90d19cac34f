"""Reading a Soul's YAML: what is refused before it is read, and where each finding points
(the owner fixes a soul by line and column, so those must be the text's own)."""

from __future__ import annotations

import pytest

from soul.document import MAX_TEXT, read_soul
from soul.report import Finding, Severity


def told(text: str) -> list[tuple[str, str, str | None, int | None, int | None]]:
    """Each finding as (check, message, path, line, column); the text must not read."""
    reading = read_soul(text)
    assert reading.soul is None
    return [(f.check, f.message, f.path, f.line, f.column) for f in reading.findings]


def test_a_text_up_to_the_limit_is_read_and_one_character_more_is_refused(v1_text: str) -> None:
    assert MAX_TEXT == 262_144
    padded = v1_text + "#" * (MAX_TEXT - len(v1_text))  # a comment to the last character
    assert read_soul(padded).soul is not None
    message = f"the text is {MAX_TEXT + 1} characters; a soul may have at most {MAX_TEXT}"
    assert told(padded + "#") == [("too-large", message, None, None, None)]


@pytest.mark.parametrize(
    ("text", "found"),
    [("", "an empty document"), ("- a\n- b\n", "a list"), ("just words\n", "a str")],
)
def test_a_text_that_is_no_mapping_is_named_for_what_it_is(text: str, found: str) -> None:
    message = f"a soul must be a mapping of keys, found {found}"
    assert told(text) == [("schema", message, None, 1, None)]


def test_a_key_given_twice_is_refused_where_it_comes_again() -> None:
    assert told("a: 1\na: 2\n") == [("duplicate-key", "duplicate key 'a'", None, 2, 1)]
    assert told("x:\n  a: 1\n  a: 2\n") == [("duplicate-key", "duplicate key 'a'", None, 3, 3)]


def test_a_key_that_is_no_scalar_is_left_to_yaml_and_the_keys_after_it_still_checked() -> None:
    assert told("? [1]\n: x\n") == [("yaml-syntax", "found unhashable key", None, 1, 3)]
    after = told("? [1]\n: x\na: 1\na: 2\n")
    assert after == [("duplicate-key", "duplicate key 'a'", None, 4, 1)]


def test_a_syntax_error_is_placed_at_its_line_and_column() -> None:
    assert told("a: [1, 2\n") == [("yaml-syntax", "did not find expected ',' or ']'", None, 2, 1)]
    assert told("a: b: c\n") == [
        ("yaml-syntax", "mapping values are not allowed in this context", None, 1, 5)
    ]


def test_a_character_yaml_will_not_read_is_told_without_a_place() -> None:
    message = "unacceptable character #x0007: control characters are not allowed"
    assert told("a: \x07\n") == [("yaml-syntax", message, None, None, None)]


def test_anchors_and_aliases_are_refused_at_the_alias() -> None:
    message = "anchors and aliases (&name, *name) are not allowed"
    assert told("a: &x 1\nb: *x\n") == [("yaml-syntax", message, None, 1, 4)]


def test_an_unknown_key_points_at_the_key_and_a_wrong_value_at_the_value(v1_text: str) -> None:
    extra = v1_text.replace("  level: guided\n", "  level: guided\n  color: red\n")
    assert told(extra) == [("schema", "unknown key 'color'", "autonomy_posture.color", 36, 3)]
    wrong = v1_text.replace("  level: guided\n", "  level: bold\n")
    message = "Input should be 'supervised', 'guided' or 'autonomous' (got 'bold')"
    assert told(wrong) == [("schema", message, "autonomy_posture.level", 35, 10)]
    missing = v1_text.replace("name: Lancelot\n", "")
    assert told(missing) == [("schema", "missing key 'name'", "name", 19, 1)]


@pytest.mark.parametrize(
    ("length", "shown"),
    [(60, "'" + "x" * 58 + "'"), (61, "'" + "x" * 56 + "...")],
    ids=["60 shown whole", "61 cut"],
)
def test_a_wrong_value_is_quoted_up_to_60_characters(v1_text: str, length: int, shown: str) -> None:
    value = "x" * (length - 2)  # its repr adds the quotes
    text = v1_text.replace("version: 1\n", f"version: {value}\n")
    message = f"Input should be a valid integer, unable to parse string as an integer (got {shown})"
    assert told(text) == [("schema", message, "version", 19, 10)]


def test_a_finding_that_names_only_a_key_path_is_placed_at_its_value(v1_text: str) -> None:
    reading = read_soul(v1_text)
    level = reading.place(Finding("x", Severity.WARNING, "m", path="autonomy_posture.level"))
    assert (level.line, level.column) == (35, 10)
    item = reading.place(Finding("x", Severity.WARNING, "m", path="requires_approval[1]"))
    second = v1_text.splitlines().index("  - file.delete")  # its second item
    assert (item.line, item.column) == (second + 1, 5)
    placed = Finding("x", Severity.WARNING, "m", path="name", line=3, column=7)
    assert reading.place(placed) is placed  # a place already known is kept


def test_a_key_path_past_what_the_text_holds_is_placed_at_the_deepest_node_it_has(
    v1_text: str,
) -> None:
    reading = read_soul(v1_text)
    lines = v1_text.splitlines()
    start = lines.index("requires_approval:") + 1
    items = next(i for i in range(start, len(lines)) if not lines[i].startswith("  - ")) - start

    def place(path: str) -> tuple[int | None, int | None]:
        found = reading.place(Finding("x", Severity.WARNING, "m", path=path))
        return found.line, found.column

    name = (lines.index("name: Lancelot") + 1, 7)
    assert place("name.first") == name  # a scalar has no keys
    the_list = (lines.index("requires_approval:") + 2, 3)
    assert place(f"requires_approval[{items}]") == the_list  # one past its last item
    assert place("requires_approval.first") == the_list  # a list has no keys
