"""The pairing code and its tries, on a clock the test moves; and owners.json."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest

from core.errors import StorageError
from core.security.owners import OwnerStore, PairedOwner
from core.security.pairing import ALPHABET, LENGTH, Pairing, PairingLimits, Verdict, shown


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def started(limits: PairingLimits | None = None) -> tuple[Pairing, Clock, list[str]]:
    clock, codes = Clock(), []
    pairing = Pairing(lambda code, ttl: codes.append(code), limits=limits, clock=clock)
    return pairing, clock, codes


def test_codes_are_short_unambiguous_and_fresh_each_time() -> None:
    made = {started()[2][0] for _ in range(200)}
    assert len(made) == 200
    for code in made:
        assert len(code) == LENGTH
        assert set(code) <= set(ALPHABET)
        assert not set(code) & set("IO01")


def test_the_right_code_pairs_once_however_it_is_typed() -> None:
    pairing, _, [code] = started()
    assert pairing.attempt("a", f"  {shown(code).lower()} ").verdict is Verdict.PAIRED
    assert pairing.attempt("b", code).verdict is Verdict.CLOSED  # single use
    assert pairing.attempt("b", code).answer is False


def test_an_expired_code_is_told_apart_and_a_new_one_announced() -> None:
    pairing, clock, codes = started(PairingLimits(code_ttl=600))
    clock.now += 599
    pairing.refresh()
    assert len(codes) == 1
    clock.now += 1
    assert pairing.attempt("a", codes[0]).verdict is Verdict.EXPIRED
    assert len(codes) == 2
    assert pairing.attempt("a", codes[1]).verdict is Verdict.PAIRED


def test_a_sender_out_of_tries_waits_even_with_the_right_code() -> None:
    pairing, clock, [code] = started(
        PairingLimits(tries_per_sender=3, sender_window=900, code_ttl=3600)
    )
    for _ in range(3):
        assert pairing.attempt("a", "AAAA-AAAA").verdict is Verdict.WRONG
    refused = pairing.attempt("a", code)
    assert refused.verdict is Verdict.TOO_MANY
    assert refused.wait_seconds == pytest.approx(900)
    clock.now += 900
    assert pairing.attempt("a", code).verdict is Verdict.PAIRED


def test_many_senders_together_lock_everyone_out_and_the_code_is_replaced() -> None:
    limits = PairingLimits(tries_overall=10, overall_window=600, code_ttl=3600)
    pairing, clock, codes = started(limits)
    for n in range(10):
        assert pairing.attempt(f"bot{n}", "AAAA-AAAA").verdict is Verdict.WRONG
    assert len(codes) == 2  # the guessed-at code is gone
    assert pairing.attempt("owner", codes[0]).verdict is Verdict.TOO_MANY
    assert pairing.attempt("owner", codes[1]).verdict is Verdict.TOO_MANY
    clock.now += 600
    assert pairing.attempt("owner", codes[0]).verdict is Verdict.WRONG  # not "expired"
    assert pairing.attempt("owner", codes[1]).verdict is Verdict.PAIRED


def test_replies_to_one_sender_are_bounded() -> None:
    pairing, clock, _ = started(PairingLimits(replies_per_sender=3, reply_window=3600))
    answered = [pairing.attempt("a", "hello").answer for _ in range(5)]
    assert answered == [True, True, True, False, False]
    assert pairing.attempt("b", "hello").answer is True
    clock.now += 3600
    assert pairing.attempt("a", "hello").answer is True


def test_words_are_not_tries() -> None:
    pairing, _, [code] = started(PairingLimits(tries_per_sender=1))
    for text in ("/start", "hello there", "12345678"):
        assert pairing.attempt("a", text).verdict is Verdict.NOT_A_CODE
    assert pairing.attempt("a", code).verdict is Verdict.PAIRED


def test_owners_file_is_private_replaced_whole_and_forgets_by_channel(tmp_path: Path) -> None:
    store = OwnerStore(tmp_path)
    assert store.load() == {}
    ada = PairedOwner("telegram", "42", "Ada", "2026-11-26T22:00:00+00:00")
    bob = PairedOwner("gchat", "bob@example.test", "", "2026-11-26T22:01:00+00:00")
    store.save(ada)
    store.save(bob)
    assert stat.S_IMODE(store.path.stat().st_mode) == 0o600
    assert OwnerStore(tmp_path).load() == {"telegram": ada, "gchat": bob}
    assert store.forget("telegram") == (ada,)
    assert store.load() == {"gchat": bob}
    assert store.forget("telegram") == ()
    assert [p.name for p in tmp_path.iterdir()] == ["owners.json"]  # no temporary left


def test_one_channel_owner_is_read_and_forgetting_nobody_writes_nothing(tmp_path: Path) -> None:
    store = OwnerStore(tmp_path)
    assert store.forget() == ()
    assert not store.path.exists()  # nothing to forget: no file is made
    ada = PairedOwner("telegram", "42", "Ada", "2026-11-26T22:00:00+00:00")
    store.save(ada)
    assert store.get("telegram") == ada
    assert store.get("gchat") is None


def test_a_damaged_owners_file_is_one_clear_error(tmp_path: Path) -> None:
    (tmp_path / "owners.json").write_text(json.dumps({"owners": {"telegram": {"x": 1}}}))
    with pytest.raises(StorageError, match="remove it to pair again"):
        OwnerStore(tmp_path).load()


def test_the_default_limits_are_those_the_guide_gives() -> None:
    pairing, _, codes = started()
    assert pairing.seconds_left() == 600  # a code lasts 10 minutes
    for _ in range(5):
        assert pairing.attempt("a", "AAAA-AAAA").verdict is Verdict.WRONG
    assert pairing.attempt("a", codes[0]).wait_seconds == pytest.approx(900)  # a quarter hour
    for n in range(25):  # 30 wrong tries from everyone together within 10 minutes
        pairing.attempt(f"bot{n}", "AAAA-AAAA")
    assert len(codes) == 2
    assert pairing.attempt("b", codes[1]).wait_seconds == pytest.approx(600)
    answered = [pairing.attempt("c", "hello").answer for _ in range(9)]
    assert answered == [True] * 8 + [False]  # 8 answers an hour to one sender


def test_refusal_receipts_name_the_verdict_in_fixed_words() -> None:
    # bot/pairing.py records these words as a refusal's reason; operators filter on them.
    assert [v.value for v in Verdict] == [
        "paired", "wrong", "expired", "too_many", "not_a_code", "closed",
    ]  # fmt: skip


def test_a_code_typed_with_spaces_inside_pairs_and_the_new_owner_is_answered() -> None:
    pairing, _, [code] = started()
    wrong = pairing.attempt("a", "AAAA AAAA")
    assert (wrong.verdict, wrong.wait_seconds, wrong.answer) == (Verdict.WRONG, 0.0, True)
    paired = pairing.attempt("a", f"{code[:2]} {code[2:5]}\t{code[5:]}")
    assert (paired.verdict, paired.wait_seconds, paired.answer) == (Verdict.PAIRED, 0.0, True)


def test_no_time_is_left_once_the_code_has_lapsed() -> None:
    pairing, clock, _ = started(PairingLimits(code_ttl=600))
    clock.now += 599.5
    assert pairing.seconds_left() == 0.5
    clock.now += 1
    assert pairing.seconds_left() == 0.0


def test_tries_stay_refused_until_the_last_half_second_has_passed() -> None:
    pairing, clock, codes = started(PairingLimits(tries_per_sender=1, sender_window=10))
    assert pairing.attempt("a", "AAAA-AAAA").verdict is Verdict.WRONG
    clock.now += 9.5
    refused = pairing.attempt("a", codes[-1])
    assert (refused.verdict, refused.wait_seconds) == (Verdict.TOO_MANY, 0.5)
    clock.now += 0.5
    assert pairing.attempt("a", codes[-1]).verdict is Verdict.PAIRED


def test_replies_are_bounded_per_hour_by_default_and_forgotten_past_4096_senders() -> None:
    pairing, clock, _ = started()
    assert [pairing.attempt("a", "hello").answer for _ in range(9)] == [True] * 8 + [False]
    clock.now += 3599
    assert pairing.attempt("a", "hello").answer is False
    for sender in range(4095):  # "a" is the oldest of 4096 senders: still remembered
        pairing.attempt(str(sender), "hello")
    assert pairing.attempt("a", "hello").answer is False
    pairing.attempt("one more", "hello")  # 4097 senders: the least recent is forgotten
    assert pairing.attempt("a", "hello").answer is True


def test_a_sender_is_answered_again_an_hour_after_the_first_reply() -> None:
    pairing, clock, _ = started()
    assert [pairing.attempt("a", "hello").answer for _ in range(9)] == [True] * 8 + [False]
    clock.now += 3600
    assert pairing.attempt("a", "hello").answer is True


def test_wrong_tries_from_long_ago_do_not_count_towards_everyone_waiting() -> None:
    limits = PairingLimits(tries_overall=3, overall_window=600, code_ttl=10_000)
    pairing, clock, codes = started(limits)
    assert pairing.attempt("a", "AAAA-AAAA").verdict is Verdict.WRONG
    assert pairing.attempt("b", "AAAA-AAAA").verdict is Verdict.WRONG
    clock.now += 600
    assert pairing.attempt("c", "AAAA-AAAA").verdict is Verdict.WRONG  # the first two lapsed
    assert pairing.attempt("d", "AAAA-AAAA").verdict is Verdict.WRONG
    assert len(codes) == 1  # nobody locked out, the code kept
    assert pairing.attempt("e", "AAAA-AAAA").verdict is Verdict.WRONG  # three in the window
    assert pairing.attempt("f", "AAAA-AAAA").verdict is Verdict.TOO_MANY
    assert len(codes) == 2


def test_a_sender_who_tries_again_is_the_last_forgotten() -> None:
    pairing, _, _ = started(PairingLimits(tries_per_sender=2, max_senders=2))
    assert pairing.attempt("a", "AAAA-AAAA").verdict is Verdict.WRONG
    assert pairing.attempt("b", "AAAA-AAAA").verdict is Verdict.WRONG
    assert pairing.attempt("a", "AAAA-AAAA").verdict is Verdict.WRONG  # a: most recent
    assert pairing.attempt("c", "AAAA-AAAA").verdict is Verdict.WRONG  # b forgotten
    assert pairing.attempt("a", "AAAA-AAAA").verdict is Verdict.TOO_MANY
    assert pairing.attempt("b", "AAAA-AAAA").verdict is Verdict.WRONG
