"""`lancelot receipts verify` and `export` as a person (or a script) runs them: real processes."""

from __future__ import annotations

import json
import re
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from core.receipts.base import CHAIN_START, Checkpoint
from core.receipts.checkpoints import CHECKPOINTS_FILE
from core.receipts.signing import PUBLIC_FILE, load_verifier
from tests.bot.test_cli import REPO, env_for, lancelot
from tests.core.receipts.test_checkpoint_chain import checkpoints_in, line_of, signed

CHECKER = re.search(
    r"## Checking the receipts.*?```python\n(.*?)```",
    (REPO / "docs" / "security.md").read_text(encoding="utf-8"),
    re.DOTALL,
)


@pytest.fixture(scope="module")
def used_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A home Lancelot has run in (a few commands, then a clean shutdown)."""
    home = tmp_path_factory.mktemp("used") / "home"
    chat = lancelot("chat", env=env_for(home), stdin="/status\n/help\n/start\n")
    assert chat.returncode == 0, chat.stderr
    return home


def copy_of(home: Path, tmp_path: Path) -> Path:
    target = tmp_path / "home"
    target.mkdir()
    for item in home.iterdir():
        if item.is_file():
            (target / item.name).write_bytes(item.read_bytes())
    return target


def cut(home: Path, keep: int) -> None:
    db = sqlite3.connect(home / "ledger.db", isolation_level=None)
    db.execute("DROP TRIGGER receipts_no_delete")
    db.execute("DELETE FROM receipts WHERE seq > ?", (keep,))
    db.close()


def receipts_in(home: Path) -> int:
    db = sqlite3.connect(home / "ledger.db")
    (count,) = db.execute("SELECT count(*) FROM receipts").fetchone()
    db.close()
    return int(count)


def test_verify_names_the_file_the_checkpoint_and_the_head(used_home: Path) -> None:
    result = lancelot("receipts", "verify", env=env_for(used_home))
    assert result.returncode == 0, result.stdout + result.stderr
    lines = result.stdout.splitlines()
    count = receipts_in(used_home)
    assert lines[0] == f"ok: {count} receipts in {used_home / 'ledger.db'}, hash chain intact"
    assert re.fullmatch(
        rf"checkpoints: \d+ matched; the last {count}:[0-9a-f]{{16}}, signed .+Z", lines[1]
    )
    assert re.fullmatch(rf"head: {count}:[0-9a-f]{{16}}", lines[2])


def test_verify_json_for_scripts_and_against_a_fingerprint(used_home: Path) -> None:
    result = lancelot("receipts", "verify", "--json", env=env_for(used_home))
    assert result.returncode == 0
    report = json.loads(result.stdout)
    assert report["ok"] is True
    assert report["file"] == str(used_home / "ledger.db")
    assert report["last_checkpoint"]["fingerprint"] == report["head"]
    head = report["head"]
    matched = lancelot("receipts", "verify", "--against", head, env=env_for(used_home))
    assert matched.returncode == 0
    assert f"fingerprint {head}: matches" in matched.stdout
    seq = head.split(":")[0]
    wrong = lancelot("receipts", "verify", "--against", f"{seq}:{'0' * 16}", env=env_for(used_home))
    assert wrong.returncode == 1
    assert "rewritten" in wrong.stdout
    bad = lancelot("receipts", "verify", "--against", "soon", env=env_for(used_home))
    assert bad.returncode == 2
    assert "not a fingerprint" in bad.stderr


@pytest.mark.parametrize("keep", [-1, 1], ids=["cut-by-one", "all-but-one"])
def test_verify_reports_a_cut_tail_naming_the_checkpoint(
    used_home: Path, tmp_path: Path, keep: int
) -> None:
    home = copy_of(used_home, tmp_path)
    count = receipts_in(home)
    kept = count - 1 if keep == -1 else keep
    cut(home, kept)
    result = lancelot("receipts", "verify", env=env_for(home))
    assert result.returncode == 1
    first = result.stdout.splitlines()[0]
    assert first.startswith(f"TAMPERED at receipt #{kept + 1} in {home / 'ledger.db'}: truncated")
    assert f"checkpoint {count}:" in first
    assert "last checkpoint matched:" in result.stdout


def test_a_wrong_home_is_an_error_and_nothing_is_created(tmp_path: Path) -> None:
    missing = tmp_path / "typo" / "home"
    result = lancelot("receipts", "verify", env=env_for(missing))
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr.count("\n") == 1
    assert str(missing) in result.stderr
    assert not missing.exists()
    as_json = lancelot("receipts", "verify", "--json", env=env_for(missing))
    assert as_json.returncode == 2
    assert json.loads(as_json.stdout)["ok"] is False


def test_a_missing_ledger_is_an_error_not_ok_zero(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    result = lancelot("receipts", "verify", env=env_for(home))
    assert result.returncode == 2
    assert "ok" not in result.stdout
    assert f"{home / 'ledger.db'}: no receipt ledger here" in result.stderr
    assert list(home.iterdir()) == []


def test_a_corrupt_ledger_is_one_line_and_a_failure_within_seconds(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "ledger.db").write_bytes(b"\x00garbage" * 4096)
    started = time.monotonic()
    result = lancelot("receipts", "verify", env=env_for(home), timeout=20)
    assert time.monotonic() - started < 10
    assert result.returncode == 1
    assert result.stdout == ""
    assert result.stderr.count("\n") == 1
    assert str(home / "ledger.db") in result.stderr
    assert "Traceback" not in result.stderr


def test_export_and_the_documented_script_re_verify(used_home: Path, tmp_path: Path) -> None:
    assert CHECKER is not None
    script = tmp_path / "check_receipts.py"
    script.write_text(CHECKER.group(1))
    out = tmp_path / "receipts.jsonl"
    result = lancelot("receipts", "export", "--out", str(out), env=env_for(used_home))
    assert result.returncode == 0, result.stderr
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(rows) == receipts_in(used_home)
    assert {"seq", "id", "action_type", "prev_hash", "hash"} <= set(rows[0])
    head = json.loads(lancelot("receipts", "verify", "--json", env=env_for(used_home)).stdout)
    check = lancelot_python(script, out, head["head"])
    assert check.returncode == 0, check.stderr
    assert check.stdout.strip() == f"ok: {len(rows)} receipts"
    rows[2]["action_name"] = "nothing-to-see"
    out.write_text("".join(json.dumps(row) + "\n" for row in rows))
    altered = lancelot_python(script, out)
    assert altered.returncode == 1
    assert f"receipt #{rows[2]['seq']}: altered" in altered.stderr


def test_export_a_range_and_a_type(used_home: Path) -> None:
    result = lancelot("receipts", "export", "--from", "2", "--to", "4", env=env_for(used_home))
    assert [json.loads(line)["seq"] for line in result.stdout.splitlines()] == [2, 3, 4]
    commands = lancelot("receipts", "export", "--type", "command", env=env_for(used_home))
    kinds = {json.loads(line)["action_type"] for line in commands.stdout.splitlines()}
    assert kinds == {"command"}


def lancelot_python(script: Path, *args: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(script), *map(str, args)], capture_output=True, text=True, timeout=60
    )


def empty_the_checkpoints(home: Path, lines: list[str]) -> None:
    cut(home, 14)
    (home / CHECKPOINTS_FILE).write_text("")


def remove_a_middle_checkpoint(home: Path, lines: list[str]) -> None:
    (home / CHECKPOINTS_FILE).write_text("".join(lines[:2] + lines[3:]))


def repeat_a_checkpoint(home: Path, lines: list[str]) -> None:
    (home / CHECKPOINTS_FILE).write_text("".join([*lines, lines[2]]))


def reorder_checkpoints(home: Path, lines: list[str]) -> None:
    (home / CHECKPOINTS_FILE).write_text("".join([lines[0], lines[3], *lines[1:3], lines[4]]))


def re_sign_with_a_new_key(home: Path, lines: list[str]) -> None:
    cut(home, 14)
    key, previous, signed_again = Ed25519PrivateKey.generate(), CHAIN_START, []
    for old in checkpoints_in(lines)[:4]:
        checkpoint = Checkpoint(old.seq, old.head, old.time, "", old.number, previous)
        signed_again.append(line_of(checkpoint, key))
        previous = checkpoint.link
    (home / CHECKPOINTS_FILE).write_text("".join(signed_again))
    (home / PUBLIC_FILE).write_text(key.public_key().public_bytes_raw().hex() + "\n")


@pytest.mark.parametrize(
    ("attack", "named"),
    [
        (empty_the_checkpoints, "checkpoints.jsonl is empty, but checkpoint.key is here"),
        (remove_a_middle_checkpoint, "checkpoints.jsonl line 3: checkpoint #4 follows #2"),
        (repeat_a_checkpoint, "checkpoints.jsonl line 6: checkpoint #3 is repeated (line 3"),
        (reorder_checkpoints, "checkpoints.jsonl line 2: checkpoint #4 is out of order"),
        (re_sign_with_a_new_key, "checkpoint.pub (key:"),
    ],
    ids=["emptied", "middle-removed", "repeated", "reordered", "re-keyed"],
)
async def test_verify_fails_naming_the_checkpoint_file_and_line(
    tmp_path: Path, attack: Callable[[Path, list[str]], None], named: str
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    lines = await signed(home)
    env = env_for(home, LANCELOT_LEDGER_CHECKPOINT_EVERY_RECEIPTS="10")
    assert lancelot("receipts", "verify", env=env).returncode == 0
    attack(home, lines)
    result = lancelot("receipts", "verify", env=env)
    assert result.returncode == 1, result.stdout + result.stderr
    first = result.stdout.splitlines()[0]
    assert first.startswith(f"TAMPERED in {home / 'ledger.db'}: {named}")
    as_json = json.loads(lancelot("receipts", "verify", "--json", env=env).stdout)
    assert as_json["ok"] is False
    assert named in as_json["reason"]


async def test_checkpoints_emptied_then_a_restart_still_fail_naming_the_receipt(
    tmp_path: Path,
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    await signed(home)  # 15 receipts, checkpointed
    env = env_for(home, LANCELOT_LEDGER_CHECKPOINT_EVERY_RECEIPTS="10")
    (home / CHECKPOINTS_FILE).write_text("")
    chat = lancelot("chat", env=env, stdin="/status\n")  # Lancelot starts again
    assert chat.returncode == 0, chat.stderr
    result = lancelot("receipts", "verify", env=env)
    assert result.returncode == 1, result.stdout + result.stderr
    assert result.stdout.splitlines()[0].startswith(
        f"TAMPERED in {home / 'ledger.db'}: ledger.db receipt #16: the checkpoint chain was lost"
    )


def test_verify_names_the_key_and_checks_it_against_its_fingerprint(used_home: Path) -> None:
    key = load_verifier(used_home)
    assert key is not None
    result = lancelot("receipts", "verify", "--against", key.fingerprint, env=env_for(used_home))
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"key: {key.fingerprint}" in result.stdout.splitlines()
    assert f"fingerprint {key.fingerprint}: matches" in result.stdout
    other = lancelot("receipts", "verify", "--against", "key:" + "0" * 16, env=env_for(used_home))
    assert other.returncode == 1
    assert other.stdout.startswith(f"TAMPERED in {used_home / 'ledger.db'}: re-keyed:")


async def test_incremental_verify_starts_from_the_last_verified_checkpoint(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    lines = await signed(home)
    env = env_for(home, LANCELOT_LEDGER_CHECKPOINT_EVERY_RECEIPTS="10")
    first = lancelot("receipts", "verify", "--incremental", env=env)
    assert first.returncode == 0, first.stdout + first.stderr
    assert first.stdout.splitlines()[0] == (
        "incremental: no earlier verify to start from; verified in full"
    )
    assert (home / "verified.json").is_file()  # the name docs/security.md gives
    last = checkpoints_in(lines)[-1]
    again = lancelot("receipts", "verify", "--incremental", "--json", env=env)
    assert again.returncode == 0, again.stdout + again.stderr
    found = json.loads(again.stdout)
    assert found["since"]["fingerprint"] == last.fingerprint
    assert found["checked"] == receipts_in(home) - last.seq
    cut(home, last.seq - 1)
    broken = lancelot("receipts", "verify", "--incremental", env=env)
    assert broken.returncode == 1
    assert broken.stdout.startswith(f"TAMPERED at receipt #{last.seq} in {home / 'ledger.db'}")
    both = lancelot("receipts", "verify", "--incremental", "--against", "1:abcdef12", env=env)
    assert both.returncode == 2
    assert "do not go together" in both.stderr
