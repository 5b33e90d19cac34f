"""What /run tells governance beyond the command line (whether a mv overwrites, whether it
stays in the workspace), and the identity of the update asking, which a replay shares."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.events import ButtonPress, Inbound
from core.governance.commands import asking, shell_action
from core.tools.workspace import Workspace


@pytest.fixture
def workspace(tmp_path: Path) -> Workspace:
    made = Workspace(tmp_path / "ws")
    (made.root / "a.txt").write_text("a")
    (made.root / "b.txt").write_text("b")
    (made.root / "folder").mkdir()
    return made


@pytest.mark.parametrize(
    ("command", "facts"),
    [
        ("mv a.txt b.txt", {"in_workspace": True, "overwrites": True}),
        ("mv a.txt folder", {"in_workspace": True, "overwrites": False}),  # moves into it
        ("mv a.txt c.txt", {"in_workspace": True, "overwrites": False}),
        ("mv a.txt ../../etc/passwd", {"in_workspace": False}),
        ("mv a.txt " + "x" * 300, {"in_workspace": True, "overwrites": True}),  # unknown
        ("mv -f a.txt b.txt", {"in_workspace": True}),  # options: the Soul reads the line
        ("cp a.txt b.txt", {"in_workspace": True}),
        ("mv 'a.txt b.txt", {"in_workspace": True}),  # no shell would run it either
    ],
)
def test_a_mv_says_whether_it_overwrites_a_file(
    workspace: Workspace, command: str, facts: dict[str, object]
) -> None:
    action = shell_action(command, workspace)
    assert (action.capability, action.command, action.params) == ("shell.exec", command, facts)


def test_the_update_asking_is_named_by_its_place_in_the_channels_inbox() -> None:
    said = Inbound("telegram", "1", "1", "/run ls", arrival=7)
    assert asking(said) == "message:telegram:7"
    pressed = ButtonPress("telegram", "1", "1", None, "token", arrival=7)
    assert asking(pressed) == "press:telegram:7"
    assert asking(Inbound("console", "1", "1", "/run ls")) is None  # no inbox: never again
