"""Google Chat endpoint: what verification and a synchronous answer cost.

Lancelot runs in this process against the fake Google (tests/fakes/gchat); a client posts
signed classic MESSAGE events to /gchat/events one at a time and measures:

- verify: google-auth's check of a bearer token alone (certificates cached);
- answer: /help from the POST to its synchronous cardsV2 answer (verification, owner check,
  input gate, command, three receipts, the outbox, rendering);
- refused: a request with a forged signature, from POST to its 401;
- split: rendering a 200 KB body into messages under 32,000 bytes.

Usage (from the repository root):

    python benchmarks/gchat.py [--count 300]
"""

from __future__ import annotations

import argparse
import asyncio
import socket
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import aiohttp

from bot.app import assemble
from bot.channels.gchat import render
from bot.channels.gchat.certs import CertCache
from bot.channels.gchat.setup import attach_gchat, gchat_endpoint
from bot.channels.gchat.verify import RequestVerifier
from bot.pairing import OwnerBook
from core.config import load_settings
from core.delivery.outbox import DeliveryPolicy
from core.events import Card, CardKind
from tests.fakes.gchat import ChatUser, FakeGoogle, SigningKey, chat_claims

PROJECT = "123456789012"
OWNER = "owner@example.test"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def report(name: str, samples: list[float]) -> None:
    ordered = sorted(samples)
    p95 = ordered[int(len(ordered) * 0.95) - 1]
    print(f"{name:8s} p50 {statistics.median(ordered):8.3f} ms   p95 {p95:8.3f} ms")


async def timed(count: int, step: Callable[[], Awaitable[object]]) -> list[float]:
    samples = []
    for _ in range(count):
        started = time.perf_counter()
        await step()
        samples.append((time.perf_counter() - started) * 1000)
    return samples


async def main(count: int) -> None:
    async with FakeGoogle() as google:
        home = Path(tempfile.mkdtemp()) / "home"
        settings = load_settings(
            environ={
                "LANCELOT_HOME": str(home),
                "LANCELOT_WEB_PORT": str(free_port()),
                "GCHAT_AUDIENCE": PROJECT,
                "GCHAT_OWNER_EMAIL": OWNER,
                "LANCELOT_GCHAT_CHAT_CERTS_URL": google.chat_certs_url,
                "LANCELOT_LIMITS_RATE_PER_MINUTE": str(count * 10),
            }
        )
        async with aiohttp.ClientSession() as session:
            verifier = RequestVerifier(
                settings.gchat,
                CertCache(session, google.chat_certs_url),
                CertCache(session, google.oauth2_certs_url),
            )
            token = f"Bearer {google.chat_key.sign(chat_claims(PROJECT))}"
            report("verify", await timed(count, lambda: verifier.verify(token)))

        endpoint = gchat_endpoint(settings)
        assert endpoint is not None
        policy = DeliveryPolicy(global_rate=0, group_rate=0)
        async with assemble(settings, routes=endpoint.routes(), delivery=policy) as app:
            await attach_gchat(
                app,
                endpoint=endpoint,
                owners=OwnerBook(app.settings, app.home, channels=list(app.channels)),
            )
            url = f"{app.web_url}/gchat/events"
            owner = ChatUser(google, url, PROJECT, email=OWNER)

            async def answer() -> None:
                result = await owner.say("/help")
                assert result.kind == "NEW_MESSAGE", result

            report("answer", await timed(count, answer))
            forged = f"Bearer {SigningKey(kid=google.chat_key.kid).sign(chat_claims(PROJECT))}"
            event, _ = owner.message_event("/help")

            async def refused() -> None:
                result = await owner.post(event, authorization=forged)
                assert result.status == 401

            report("refused", await timed(count, refused))

    body = "\n".join(f"line {i}: " + "<b>&</b> " * 30 for i in range(800))
    card = Card(kind=CardKind.REPLY, title="Log", body=body)
    started = time.perf_counter()
    messages = render.messages(card)
    elapsed = (time.perf_counter() - started) * 1000
    sizes = [render.encoded_size(m) for m in messages]
    print(f"split    {len(body.encode()) // 1024} KB body -> {len(messages)} messages in ", end="")
    print(f"{elapsed:.1f} ms, largest {max(sizes)} bytes (limit {render.MESSAGE_LIMIT})")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=300)
    asyncio.run(main(parser.parse_args().count))
