"""Every request must prove it came from Google Chat: google-auth checks the bearer token
against certificates the fake Google serves; anything else gets 401 and a bounded receipt."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.gchat import FakeGoogle, SigningKey, chat_claims, id_token_claims

from .harness import PROJECT_NUMBER, running, settings_for

APP_URL = "https://lancelot.example.test/gchat/events"


async def test_a_token_from_chat_for_the_project_is_accepted_and_certs_are_cached(
    google: FakeGoogle, tmp_path: Path
) -> None:
    async with running(google, settings_for(google, tmp_path / "home")) as lancelot:
        for _ in range(3):
            answer = await lancelot.owner.say("/start")
            assert answer.status == 200
            assert answer.kind == "NEW_MESSAGE"

    assert google.cert_fetches == {"chat": 1, "oauth2": 0}  # Cache-Control: max-age=3600


@pytest.mark.parametrize(
    ("claims", "reason"),
    [
        ({"iss": "someone@evil.example"}, "issuer"),
        ({"aud": "999999999999"}, "audience"),
        ({"iat": int(time.time()) - 7200, "exp": int(time.time()) - 3600}, "expired"),
    ],
)
async def test_wrong_issuer_audience_or_expiry_gets_401(
    google: FakeGoogle, tmp_path: Path, claims: dict[str, Any], reason: str
) -> None:
    async with running(google, settings_for(google, tmp_path / "home")) as lancelot:
        event, _ = lancelot.owner.message_event("/run rm notes.txt")
        token = google.chat_key.sign({**chat_claims(PROJECT_NUMBER), **claims})
        answer = await lancelot.owner.post(event, authorization=f"Bearer {token}")
        refused = await lancelot.receipts("unverified")
        inbound = await lancelot.receipts("inbound")

    assert answer.status == 401
    assert inbound == []
    assert [r.action_name for r in refused] == [reason]
    assert token not in refused[0].inputs
    assert token.split(".")[2] not in refused[0].inputs


async def test_a_forged_signature_gets_401(google: FakeGoogle, tmp_path: Path) -> None:
    forger = SigningKey(kid=google.chat_key.kid)  # claims Google's key id, signs with its own
    async with running(google, settings_for(google, tmp_path / "home")) as lancelot:
        event, _ = lancelot.owner.message_event("/start")
        token = forger.sign(chat_claims(PROJECT_NUMBER))
        answer = await lancelot.owner.post(event, authorization=f"Bearer {token}")
        refused = await lancelot.receipts("unverified")

    assert answer.status == 401
    assert [r.action_name for r in refused] == ["signature"]


@pytest.mark.parametrize("header", ["", "Basic abc", "Bearer ", "Bearer not.a.jwt"])
async def test_a_missing_or_garbled_header_gets_401(
    google: FakeGoogle, tmp_path: Path, header: str
) -> None:
    async with running(google, settings_for(google, tmp_path / "home")) as lancelot:
        event, _ = lancelot.owner.message_event("/start")
        answer = await lancelot.owner.post(event, authorization=header or " ")

    assert answer.status == 401


@pytest.mark.parametrize("token", ["not.a.jwt", "abc", "e30.e30", "....", "Zm9v.YmFy.YmF6"])
async def test_a_token_that_cannot_be_read_gets_401_while_certificates_are_unreachable(
    google: FakeGoogle, tmp_path: Path, token: str
) -> None:
    google.certs_down = True  # a 503 would ask the sender to retry what can never pass
    async with running(google, settings_for(google, tmp_path / "home")) as lancelot:
        event, _ = lancelot.owner.message_event("/start")
        answer = await lancelot.owner.post(event, authorization=f"Bearer {token}")
        refused = await lancelot.receipts("unverified")

    assert answer.status == 401
    assert [r.action_name for r in refused] == ["malformed"]
    assert google.cert_fetches == {"chat": 0, "oauth2": 0}


async def test_refusals_are_bounded(google: FakeGoogle, tmp_path: Path) -> None:
    async with running(google, settings_for(google, tmp_path / "home")) as lancelot:
        event, _ = lancelot.owner.message_event("/start")
        for _ in range(20):
            answer = await lancelot.owner.post(event, authorization="Bearer x.y.z")
            assert answer.status == 401
        refused = await lancelot.receipts("unverified")

    assert len(refused) == 1


async def test_an_unknown_key_id_refetches_the_certificates_once(
    google: FakeGoogle, tmp_path: Path
) -> None:
    async with running(google, settings_for(google, tmp_path / "home")) as lancelot:
        assert (await lancelot.owner.say("/start")).status == 200
        google.chat_key = SigningKey()  # Google rotated its key
        assert (await lancelot.owner.say("/start")).status == 200

    assert google.cert_fetches["chat"] == 2


async def test_an_id_token_for_the_endpoint_url_is_accepted(
    google: FakeGoogle, tmp_path: Path
) -> None:
    settings = settings_for(google, tmp_path / "home", GCHAT_AUDIENCE=APP_URL)
    async with running(google, settings) as lancelot:
        answer = await lancelot.owner.say("/start", "addon")

    assert answer.status == 200
    assert answer.kind == "NEW_MESSAGE"
    assert google.cert_fetches == {"chat": 0, "oauth2": 1}


@pytest.mark.parametrize(
    ("claims", "reason"),
    [
        ({"email": "someone@evil.example"}, "email"),
        ({"email_verified": False}, "email"),
        ({"iss": "chat@system.gserviceaccount.com"}, "issuer"),
        ({"aud": "https://elsewhere.example.test/"}, "audience"),
    ],
)
async def test_an_id_token_not_from_chat_gets_401(
    google: FakeGoogle, tmp_path: Path, claims: dict[str, Any], reason: str
) -> None:
    settings = settings_for(google, tmp_path / "home", GCHAT_AUDIENCE=APP_URL)
    async with running(google, settings) as lancelot:
        event, _ = lancelot.owner.message_event("/start", "addon")
        token = google.id_key.sign({**id_token_claims(APP_URL), **claims})
        answer = await lancelot.owner.post(event, authorization=f"Bearer {token}", fmt="addon")
        refused = await lancelot.receipts("unverified")

    assert answer.status == 401
    assert [r.action_name for r in refused] == [reason]


async def test_a_chat_jwt_is_not_an_id_token(google: FakeGoogle, tmp_path: Path) -> None:
    settings = settings_for(google, tmp_path / "home", GCHAT_AUDIENCE=APP_URL)
    async with running(google, settings) as lancelot:
        event, _ = lancelot.owner.message_event("/start")
        token = google.chat_key.sign(chat_claims(APP_URL))  # the other kind of key
        answer = await lancelot.owner.post(event, authorization=f"Bearer {token}")

    assert answer.status == 401
