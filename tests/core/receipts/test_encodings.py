"""What a value may be an encoding of: every text a base64 or hex run really encodes comes
back whole, from either base64 alphabet and behind up to three neighbouring characters;
words of one case and binary data are not read as text; a plain value has no decodings."""

from __future__ import annotations

import base64
import random
import string

import pytest

from core.receipts.encodings import base64_texts, decodings, hex_texts
from core.receipts.redaction import MASK, Redactor

PEAS = "Plant peas in March, beans in May."
LINE = "DB_PASSWORD=not-a-real-password-4417"


def sample_texts() -> list[str]:
    """Printable texts of every length from 12 to 80 characters, some of them several
    times: their encodings end in every padding and hold both alphabets' special
    characters."""
    rng = random.Random(31)
    alphabet = string.ascii_letters + string.digits + string.punctuation + " "
    return ["".join(rng.choices(alphabet, k=n)) for n in range(12, 81) for _ in range(6)]


def test_every_text_comes_back_whole_from_its_base64_in_either_alphabet() -> None:
    texts = sample_texts()
    encoded = [base64.b64encode(t.encode()).decode() for t in texts]
    safe = [base64.urlsafe_b64encode(t.encode()).decode() for t in texts]
    # The encodings end in most of the 64 characters: none of them may be taken for padding.
    assert len({e.rstrip("=")[-1] for e in encoded}) >= 48
    assert any("-" in s or "_" in s for s in safe)
    for text, standard, urlsafe in zip(texts, encoded, safe, strict=True):
        if standard.islower() or standard.isupper():
            continue
        assert text in base64_texts(standard), standard
        assert text in base64_texts(urlsafe), urlsafe
        assert text in base64_texts(urlsafe.rstrip("=")), urlsafe


@pytest.mark.parametrize("neighbours", ["x", "x=", "ab_"])
def test_a_run_is_read_behind_up_to_three_neighbouring_characters(neighbours: str) -> None:
    run = neighbours + base64.b64encode(PEAS.encode()).decode()
    assert PEAS in base64_texts(run)


def test_a_run_gives_only_the_texts_it_encodes() -> None:
    # Read at its first four offsets with both alphabets: the encoded text twice (one per
    # alphabet), and no shorter tail of it read from further in.
    assert base64_texts(base64.b64encode(PEAS.encode()).decode()) == [PEAS, PEAS]


@pytest.mark.parametrize("triples", [["j'a", "j'b", "j'c", "j'd"], ["  A", "  B", "  C", "  D"]])
def test_letters_of_one_case_are_words_not_base64(triples: list[str]) -> None:
    # These runs do decode to printable text, but 16 random base64 characters of one case
    # come up once in ten thousand: a run of them is a word (a slug, a host name).
    run = base64.b64encode("".join(triples).encode()).decode()
    assert run.isalpha()
    assert run.islower() or run.isupper()
    assert base64_texts(run) == []


def test_a_hex_run_decodes_to_its_text() -> None:
    assert hex_texts(PEAS.encode().hex()) == [PEAS]
    assert hex_texts(PEAS.encode().hex().upper()) == [PEAS]


def test_an_odd_hex_digit_at_the_end_is_left_out_not_a_crash() -> None:
    assert hex_texts(PEAS.encode().hex() + "a") == [PEAS]


def test_binary_data_is_not_text() -> None:
    blob = bytes(range(256)) * 2
    assert hex_texts(blob.hex()) == []
    assert base64_texts(base64.b64encode(blob).decode()) == []
    assert hex_texts("00" * 16) == []


def test_text_may_hold_one_unprintable_character_in_ten() -> None:
    # Tabs and newlines are text; a bell or a NUL is not.
    twenty = "bell\x07\tand\nnul\x00: peas"
    assert len(twenty) == 20
    assert hex_texts(twenty.encode().hex()) == [twenty]  # 2 in 20: still text
    assert hex_texts(("\x07" + twenty).encode().hex()) == []  # 3 in 21: not


def test_the_head_decides_first_over_its_256_characters() -> None:
    # A binary blob is known by its head: 26 unprintable in the first 256 is not text,
    # however clean the rest; 25 there (and one just after) is, when the whole is clean.
    clean = "p" * 2000
    spoiled = ("\x01" + "p" * 9) * 26
    spoiled_head = spoiled[:256] + clean
    assert hex_texts(spoiled_head.encode().hex()) == []
    fair_head = ("\x01" + "p" * 9) * 25 + "p" * 6 + "\x01" + clean
    assert fair_head[:256].count("\x01") == 25
    assert fair_head[256] == "\x01"
    assert hex_texts(fair_head.encode().hex()) == [fair_head]


def test_a_plain_value_has_no_decodings() -> None:
    assert decodings("what does the garden page say?") == []
    assert decodings("peas%20and%20beans") == ["peas and beans"]


def test_a_value_holding_a_hex_run_decodes_to_its_text() -> None:
    assert PEAS in decodings(f"id={PEAS.encode().hex()};")


def test_a_secret_in_hex_then_base64_is_masked() -> None:
    # One encoding inside another: the base64 run decodes to a hex run, which holds it.
    wrapped = base64.b64encode(LINE.encode().hex().encode()).decode()
    assert Redactor().text(f"log: {wrapped} end") == f"log: {MASK} end"
