"""Secrets never reach storage; ordinary text and numbers survive redaction untouched."""

from __future__ import annotations

import base64
import json
import random

import pytest

from core.receipts import redaction
from core.receipts.redaction import MASK, Redactor

# Obviously fake credentials, built at run time in each provider's shape.
OPENAI = "sk-" + "x" * 40
OPENAI_PROJECT = "sk-proj-" + "Ab1_" * 10
ANTHROPIC = "sk-ant-api03-" + "y" * 40
GOOGLE = "AIza" + "z" * 35
GITHUB = "ghp_" + "g" * 36
GITHUB_PAT = "github_pat_" + "p" * 40
TELEGRAM = "123456789:" + "T" * 35
SLACK = "xoxb-" + "1" * 12 + "-" + "s" * 20
AWS = "AKIA" + "Q" * 16
JWT = "eyJ" + "h" * 20 + "." + "b" * 20 + "." + "s" * 20
PRIVATE_KEY = "-----BEGIN RSA PRIVATE KEY-----\n" + "k" * 64 + "\n-----END RSA PRIVATE KEY-----"


@pytest.fixture
def redactor() -> Redactor:
    return Redactor()


@pytest.mark.parametrize(
    "secret",
    [OPENAI, OPENAI_PROJECT, ANTHROPIC, GOOGLE, GITHUB, GITHUB_PAT, TELEGRAM, SLACK, AWS, JWT],
    ids=[
        "openai",
        "openai-project",
        "anthropic",
        "google",
        "github",
        "github-pat",
        "telegram",
        "slack",
        "aws",
        "jwt",
    ],
)
def test_provider_keys_are_masked_wherever_they_appear(redactor: Redactor, secret: str) -> None:
    for text in (secret, f"key={secret}", f"my key is {secret}, keep it safe", f"'{secret}'"):
        masked = redactor.text(text)
        assert secret not in masked
        assert MASK in masked


def test_private_key_blocks_are_masked_whole(redactor: Redactor) -> None:
    masked = redactor.text(f"here:\n{PRIVATE_KEY}\nthanks")
    assert masked == f"here:\n{MASK}\nthanks"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Authorization: Bearer abc123def456ghi789", f"Authorization: Bearer {MASK}"),
        ("-H 'Authorization: Bearer " + "t0k" * 8 + "'", f"-H 'Authorization: Bearer {MASK}'"),
        ("Authorization: Basic dXNlcjpwYXNz", f"Authorization: Basic {MASK}"),
        ("bearer " + "q" * 24, f"bearer {MASK}"),
        ("password=hunter2hunter2", f"password={MASK}"),
        ("export DB_PASSWORD=correct-horse-9", f"export DB_PASSWORD={MASK}"),
        ("mysql --password: s3cr3t!!", f"mysql --password: {MASK}"),
        ("api_key: abcd1234efgh", f"api_key: {MASK}"),
        ("/cb?token=abcd1234&page=2", f"/cb?token={MASK}&page=2"),
        ('{"api_key": "abcd1234efgh", "model": "gpt"}', f'{{"api_key": "{MASK}", "model": "gpt"}}'),
        ("git clone https://bob:pa55word@host/r.git", f"git clone https://{MASK}@host/r.git"),
    ],
)
def test_labelled_secrets_keep_the_label_and_lose_the_value(
    redactor: Redactor, text: str, expected: str
) -> None:
    assert redactor.text(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "The token is stored in the vault; ask ops for a new token.",
        "Each token costs money, so keep prompts short. Tokens: many.",
        "I have a basic question about git rebase",
        "The bearer of this letter is a friend.",
        "commit 3f786850e387550fdab836ed7e6dc881de23001b fixed the build",
        "request id 123e4567-e89b-12d3-a456-426614174000 failed",
        "see task-runner-configuration-file.yaml and risk-assessment-framework-v2.md",
        "Visit https://example.com/docs?page=2 for details",
        "ssh git@github.com:owner/repo.git",
        "Passwords should be long; a password manager helps.",
        "The secret to good bread is patience.",
        "The weather is nice today, isn't it?",
    ],
)
def test_ordinary_text_is_left_alone(redactor: Redactor, text: str) -> None:
    assert redactor.text(text) == text


def test_known_secrets_are_masked_even_without_a_known_shape() -> None:
    configured = "q7-local-" + "m" * 10
    redactor = Redactor([configured, "abc"])  # too short to mask safely: ignored
    assert redactor.text(f"connecting with {configured} now") == f"connecting with {MASK} now"
    assert redactor.text("abc stays") == "abc stays"


def test_a_later_secret_is_masked_too(redactor: Redactor) -> None:
    redactor.add_secret("webhook-" + "w" * 12)
    assert redactor.text("url: /hook/webhook-" + "w" * 12) == f"url: /hook/{MASK}"


def test_json_values_under_secret_keys_are_masked_whole(redactor: Redactor) -> None:
    record = {
        "command": f"deploy --key {OPENAI}",
        "api_key": "short",
        "headers": {"Authorization": "Bearer x", "Accept": "application/json"},
        "nested": [{"password": "pw"}, {"note": "fine"}],
        "empty_secret": "",
        "count": 3,
    }
    assert redactor.value(record) == {
        "command": f"deploy --key {MASK}",
        "api_key": MASK,
        "headers": {"Authorization": MASK, "Accept": "application/json"},
        "nested": [{"password": MASK}, {"note": "fine"}],
        "empty_secret": "",
        "count": 3,
    }


def test_token_counts_are_not_secrets(redactor: Redactor) -> None:
    usage = {
        "token_count": 1234,
        "max_tokens": 512,
        "usage": {"prompt_tokens": 10, "completion_tokens": 20, "total_tokens": 30},
        "usageMetadata": {"promptTokenCount": 7, "candidatesTokenCount": 8},
        "cache_read_input_tokens": 4,
        "auth_token": "t",
        "access_token": "t",
        "token": "t",
    }
    assert redactor.value(usage) == {
        **usage,
        "auth_token": MASK,
        "access_token": MASK,
        "token": MASK,
    }


def test_redacted_json_text_still_parses(redactor: Redactor) -> None:
    text = json.dumps({"api_key": "abcd1234efgh", "key": GOOGLE, "n": 1})
    assert json.loads(redactor.text(text)) == {"api_key": MASK, "key": MASK, "n": 1}


def test_secrets_glued_together_are_each_masked(redactor: Redactor) -> None:
    # One scan for every shape at once resumed after the first key, where the second one's
    # "starts a word" check saw the first key's last letter, and let it through.
    assert redactor.text(f"{GOOGLE}{GITHUB}") == f"{MASK}{MASK}"
    assert redactor.text(f"{AWS}{TELEGRAM} x") == f"{MASK}{MASK} x"


def test_the_quick_checks_never_skip_text_the_full_scan_would_change() -> None:
    # Text built from the patterns' pieces, mixed case and fillers: the shortcuts (a shape
    # runs only on text holding its mark, labels only on text holding a label's word) must
    # give exactly what running every shape and every label gives.
    pieces = [
        OPENAI,
        GOOGLE,
        GITHUB,
        TELEGRAM,
        SLACK,
        AWS,
        JWT,
        PRIVATE_KEY,
        "https://u:pw@h",
        "BeArEr ",
        "Basic ",
        "baſic ",
        "password=",
        "token: ",
        "api-key=",
        '"token" :\t',
        "'secret'=",
        "Authorization: ",
        "pwd =",
        "KEY",
        "sk-ant-",
        "ghp_",
        "@",
        "=",
        ":",
        " ",
        "abcd1234efgh",
        "run 42",
    ]
    rng = random.Random(7)
    texts = ["".join(rng.choice(pieces) for _ in range(rng.randint(1, 5))) for _ in range(3000)]
    fast = [Redactor().text(t) for t in texts]
    # The reference: every shape pattern over the whole text, in order, then every label.
    full = []
    for text in texts:
        for _, pattern in redaction._SHAPES:
            text = pattern.sub(MASK, text)
        full.append(redaction._LABELLED.sub(lambda m: m.group(1) + MASK, text))
    assert fast == full
    assert any(MASK in t for t in fast)
    assert any(MASK not in t for t in fast)


@pytest.mark.parametrize("label", ["passwd", "pwd", "secret", "api-key", "auth_token"])
def test_every_label_masks_its_value(redactor: Redactor, label: str) -> None:
    assert redactor.text(f"{label}=hunter2222 then") == f"{label}={MASK} then"


def test_a_url_encoded_labelled_secret_is_masked_whole(redactor: Redactor) -> None:
    masked = redactor.text("go to /login?next=%2Fhome%3Fpassword%3Dhunter2222 now")
    assert masked == f"go to {MASK} now"


def test_known_secrets_of_six_characters_or_more_are_masked_longest_first() -> None:
    redactor = Redactor(["abcdef", "abcde", "abcdef-longer"])
    assert redactor.text("x abcdef-longer y abcdef z abcde") == f"x {MASK} y {MASK} z abcde"


def test_each_new_secret_moves_the_generation_on() -> None:
    # Whoever cached text masked before (the model's redaction) masks it again after a change.
    redactor = Redactor(["first-secret"])
    before = redactor.generation
    redactor.add_secret("first-secret")
    redactor.add_secret("short")
    assert redactor.generation == before
    redactor.add_secret("second-secret")
    assert redactor.generation != before


class Label(str):
    """A str subclass, as a StrEnum member is."""


class Settings(dict[str, object]):
    """A dict subclass."""


class Items(list[object]):
    """A list subclass."""


def test_data_of_any_container_or_string_type_is_masked_inside(redactor: Redactor) -> None:
    data = {
        "label": Label(f"key {OPENAI}"),
        "settings": Settings(password="hunter2222", port=8080),
        "items": Items([OPENAI, 1]),
        "pair": (OPENAI, None),
        7: [True, 2.5, None],
    }
    assert redactor.value(data) == {
        "label": f"key {MASK}",
        "settings": {"password": MASK, "port": 8080},
        "items": [MASK, 1],
        "pair": [MASK, None],
        "7": [True, 2.5, None],
    }
    kept = object()
    assert redactor.value(kept) is kept


def test_a_credential_shape_is_told_apart_from_a_labelled_value() -> None:
    assert redaction.holds_credential(f"here: {OPENAI}")
    assert redaction.holds_credential(PRIVATE_KEY)
    assert not redaction.holds_credential("password=hunter2222")
    assert not redaction.holds_credential("task-runner-configuration")


def test_decoding_goes_three_encodings_deep_and_no_further(redactor: Redactor) -> None:
    # ENCODING_DEPTH bounds the work a value costs: a secret under three encodings is found,
    # one under a fourth is past the bound.
    text = "password=hunter2222"
    for _ in range(3):
        text = base64.b64encode(text.encode()).decode()
    assert redactor.text(f"x {text} y") == f"x {MASK} y"
    deeper = base64.b64encode(text.encode()).decode()
    assert redactor.text(f"x {deeper} y") == f"x {deeper} y"
