"""`lancelot replay` as a person (or a script) runs it, in a real process, over the ledger
of real /run requests on the Docker sandbox."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from bot.app import assemble
from bot.ledger import LEDGER_FILE
from core.config import load_settings
from soul import SHIPPED_VERSIONS_DIR
from tests.bot.test_cli import env_for, lancelot
from tests.core.governance.test_replay import run_commands
from tests.fakes.channel import MemoryChannel
from tests.fakes.owner import say

COMMANDS = ("ls -la /workspace", "echo hi > a.txt", "rm -rf /workspace/old", "cat .env", "rm -rf /")


@pytest.fixture
async def home(tmp_path: Path, docker_image: str) -> Path:
    """A home whose ledger holds the decisions of five /run requests (see run_commands)."""
    home = tmp_path / "home"
    env = {"LANCELOT_HOME": str(home), "LANCELOT_SANDBOX_IMAGE": docker_image}
    async with assemble(load_settings(environ=env), web=False) as app:
        phone = MemoryChannel()
        await app.attach(phone)
        await run_commands(app, phone)
    return home


@pytest.fixture
async def plain_home(tmp_path: Path) -> Path:
    """A home whose ledger holds one /status request (no decision)."""
    home = tmp_path / "home"
    async with assemble(load_settings(environ={"LANCELOT_HOME": str(home)}), web=False) as app:
        phone = MemoryChannel()
        await app.attach(phone)
        await say(app, phone, "/status")
    return home


def requests(home: Path) -> dict[str, str]:
    """Each /run command's request id (the quest its decision belongs to)."""
    db = sqlite3.connect(home / LEDGER_FILE)
    rows = db.execute(
        "SELECT json_extract(inputs, '$.command'), quest_id FROM receipts"
        " WHERE action_type = 'policy_decision' ORDER BY seq"
    ).fetchall()
    db.close()
    return {str(command): str(quest) for command, quest in rows}


def soul_file(tmp_path: Path, old: str, new: str) -> Path:
    """The shipped Soul with one line changed."""
    text = (SHIPPED_VERSIONS_DIR / "soul_v1.yaml").read_text(encoding="utf-8")
    assert old in text
    path = tmp_path / "proposed.yaml"
    path.write_text(text.replace(old, new), encoding="utf-8")
    return path


def replay(home: Path, *args: str) -> tuple[int, str, str]:
    done = lancelot("replay", *args, env=env_for(home))
    return done.returncode, done.stdout, done.stderr


async def test_each_request_replays_to_the_same_decisions(home: Path) -> None:
    ids = requests(home)
    assert tuple(ids) == COMMANDS
    for command, request in ids.items():
        code, out, err = replay(home, request, "--json")
        assert code == 0, (command, out, err)
        report = json.loads(out)
        assert report["ok"] is True
        assert [s["command"] for s in report["steps"]] == [command]
        assert report["steps"][0]["recorded"] == report["steps"][0]["recomputed"]
    code, out, _ = replay(home, ids["echo hi > a.txt"])
    assert code == 0
    assert (
        out.splitlines()[-1]
        == f"ok: 1 decisions of request {ids['echo hi > a.txt']} decided the same again"
    )


async def test_a_changed_soul_is_caught_naming_the_step(home: Path, tmp_path: Path) -> None:
    stricter = soul_file(tmp_path, "    creates: T1", "    creates: T3")
    request = requests(home)["echo hi > a.txt"]
    code, out, _ = replay(home, request, "--soul", str(stricter))
    assert code == 1
    assert out.splitlines()[-1] == (
        "MISMATCH at step 1 (echo hi > a.txt): verdict: allow, now needs_approval; "
        "tier: T1, now T3; reason: '', now T3 action needs your approval"
    )
    code, out, _ = replay(home, request, "--soul", str(stricter), "--json")
    assert code == 1
    assert json.loads(out)["first_mismatch"] == 1


async def test_a_soul_changed_on_disk_is_not_taken_for_the_one_that_decided(
    home: Path, tmp_path: Path
) -> None:
    changed = soul_file(tmp_path, "    creates: T1", "    creates: T3")
    (home / "soul").mkdir(exist_ok=True)
    (home / "soul" / "soul_v1.yaml").write_text(changed.read_text())
    code, out, _ = replay(home, requests(home)["echo hi > a.txt"])
    assert code == 2
    assert "soul v1 on disk is not the soul that decided" in out


async def test_what_if_lists_what_a_proposed_soul_would_change(home: Path, tmp_path: Path) -> None:
    stricter = soul_file(tmp_path, "    creates: T1", "    creates: T3")
    code, out, err = replay(home, "--soul", str(stricter), "--days", "30", "--json")
    assert code == 0, err
    found = json.loads(out)
    assert found["decisions"] == 5
    assert found["would_now_ask"] == {
        "count": 1,
        "examples": ["echo hi > a.txt (T1 allow, now T3 needs_approval)"],
    }
    assert found["would_now_run_without_asking"]["count"] == 0
    assert found["sentence"] == "Over the last 30 days this would have asked you once more."
    code, out, _ = replay(home, "--soul", str(stricter), "--days", "30")
    assert out.splitlines()[:3] == [
        "Over the last 30 days this would have asked you once more.",
        "decided again: 5; not replayable: 0",
        "would now ask: 1",
    ]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("no-such-request",), "no receipt no-such-request in"),
        (("--soul", "x.yaml", "--days", "0"), "x.yaml: no such Soul file"),
        (("--days", "30"), "--days needs --soul FILE"),
        (("x", "--days", "30"), "give a request id, or --soul FILE --days N (not both)"),
        ((), "give a request id, or --soul FILE --days N"),
        (("--soul", "missing.yaml", "--days", "30"), "missing.yaml: no such Soul file"),
    ],
)
async def test_bad_input_exits_2_with_one_line(
    plain_home: Path, args: tuple[str, ...], message: str
) -> None:
    code, out, err = replay(plain_home, *args)
    assert code == 2
    assert out == ""
    assert message in err
    assert len(err.splitlines()) == 1


async def test_a_soul_file_that_does_not_lint_is_refused(plain_home: Path, tmp_path: Path) -> None:
    broken = soul_file(tmp_path, "    deletes: T3", "    deletes: T0")
    code, _, err = replay(plain_home, "--soul", str(broken), "--days", "30")
    assert code == 2
    assert "not a Soul Lancelot would run under" in err


async def test_a_request_without_decisions_has_nothing_to_replay(plain_home: Path) -> None:
    db = sqlite3.connect(plain_home / LEDGER_FILE)
    (status,) = db.execute("SELECT id FROM receipts WHERE action_type = 'command'").fetchone()
    db.close()
    code, out, _ = replay(plain_home, status)
    assert code == 2
    assert out == f"request {status}: no decision could be replayed\n"
