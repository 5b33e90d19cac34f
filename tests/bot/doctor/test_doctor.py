"""`lancelot doctor` as a person runs it: a real process against fake peers at the wire."""

from __future__ import annotations

import asyncio
import importlib.util
import json
import os
import socket
import sqlite3
import sys
import time
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from aiohttp import web

from bot.channels.gchat.doctor import check_gchat
from bot.channels.registry import CHANNELS
from bot.doctor.local import check_local_model, check_port
from bot.doctor.peers import check_clock
from bot.doctor.report import Finding
from bot.home import home_lock
from core.config import load_settings
from core.security.owners import OwnerStore, PairedOwner
from tests.fakes.gchat.server import SA_EMAIL, FakeGoogle
from tests.fakes.llm.anthropic import FakeAnthropic
from tests.fakes.llm.gemini import FakeGemini
from tests.fakes.llm.openai import FakeOpenAI
from tests.fakes.processes import spawned
from tests.fakes.telegram_server import FakeTelegram

REPO = Path(__file__).resolve().parents[3]
GOOD_TOKEN = "123456:TEST-fake-token"  # FakeTelegram's; not a real token


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def base_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    keep = ("PATH", "HOME", "LANG", "DOCKER_HOST", "PYTHONPATH", "LANCELOT_SANDBOX_IMAGE")
    env = {k: v for k, v in os.environ.items() if k in keep}
    env.update(
        LANCELOT_HOME=str(tmp_path / "home"),
        LANCELOT_CONFIG=str(REPO / "config" / "lancelot.yaml"),
        LANCELOT_WEB_PORT=str(closed_port()),
        FEATURE_LOCAL_MODEL="false",
    )
    env.update(extra)
    return env


async def doctor(env: dict[str, str], *args: str) -> tuple[int, str]:
    """Run `lancelot doctor` while this loop keeps the fakes answering; under `--json` it
    must print nothing on stderr (scripts read stdout and may treat stderr as failure)."""
    async with spawned(
        sys.executable, "-m", "bot.cli", "doctor", *args,
        env=env, cwd=REPO, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    ) as process:  # fmt: skip
        out, err = await asyncio.wait_for(process.communicate(), 120)
    assert "Traceback" not in err.decode(), err.decode()
    if "--json" in args:
        assert err.decode() == "", err.decode()
    assert process.returncode is not None
    return process.returncode, out.decode()


def by_name(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {check["name"]: check for check in report["checks"]}


async def test_a_healthy_setup_passes_with_ticks_and_exit_0(tmp_path: Path) -> None:
    async with FakeTelegram(GOOD_TOKEN) as tg, FakeOpenAI() as openai:
        env = base_env(
            tmp_path,
            TELEGRAM_BOT_TOKEN=GOOD_TOKEN,
            TELEGRAM_OWNER_ID="1001",
            TELEGRAM_API_BASE_URL=tg.base_url,
            OPENAI_API_KEY="sk-test-not-real",
            OPENAI_BASE_URL=openai.base_url,
            DOCKER_HOST=f"unix://{tmp_path / 'no-engine.sock'}",  # optional: still exit 0
        )
        code, out = await doctor(env)
    assert code == 0, out
    lines = out.splitlines()
    assert any(
        line.startswith("✓ telegram token ") and "@lancelot_test_bot" in line for line in lines
    )
    assert any(line.startswith("✓ telegram webhook ") and "long polling" in line for line in lines)
    assert any(line.startswith("✓ openai key ") for line in lines)
    assert any(line.startswith("✓ clock ") for line in lines)  # against the fake's Date
    assert any(line.startswith("✗ docker engine ") and "(optional)" in line for line in lines)
    assert lines[-1].startswith("nothing needed is broken; 1 optional part missing")
    assert [r.model for r in openai.requests] == ["gpt-4o-mini"]  # one tiny call
    assert openai.requests[0].body.get("max_tokens") == 1


async def test_a_telegram_owner_not_paired_yet_is_optional_and_a_paired_one_named(
    tmp_path: Path,
) -> None:
    async with FakeTelegram(GOOD_TOKEN) as tg:
        env = base_env(tmp_path, TELEGRAM_BOT_TOKEN=GOOD_TOKEN, TELEGRAM_API_BASE_URL=tg.base_url)
        _, before = await doctor(env, "--json")
        OwnerStore(tmp_path / "home").save(
            PairedOwner("telegram", "1001", "Ada", "2026-11-26T22:00:00+00:00")
        )
        _, after = await doctor(env, "--json")
    unpaired = by_name(json.loads(before))["telegram owner"]
    assert unpaired["status"] == "failed"
    assert unpaired["needed"] is False
    assert unpaired["fix"] == "run `lancelot run` and send the bot the pairing code it prints"
    paired = by_name(json.loads(after))["telegram owner"]
    assert (paired["status"], paired["detail"]) == ("ok", "1001, paired on 2026-11-26")


async def test_bad_token_dead_engine_json_and_exit_1(tmp_path: Path) -> None:
    wrong = "123456:TEST-wrong-token"
    async with FakeTelegram(GOOD_TOKEN) as tg:
        env = base_env(
            tmp_path,
            TELEGRAM_BOT_TOKEN=wrong,
            TELEGRAM_OWNER_ID="1001",
            TELEGRAM_API_BASE_URL=tg.base_url,
            DOCKER_HOST=f"unix://{tmp_path / 'closed.sock'}",
        )
        code, out = await doctor(env, "--json")
    assert code == 1
    report = json.loads(out)
    assert report["ok"] is False
    checks = by_name(report)
    token = checks["telegram token"]
    assert token["status"] == "failed"
    assert token["needed"] is True
    assert "refused it (401 Unauthorized)" in token["detail"]
    assert "TELEGRAM_BOT_TOKEN" in token["fix"]
    engine = checks["docker engine"]
    assert engine["status"] == "failed"
    assert engine["needed"] is False
    assert "closed.sock" in engine["detail"]
    assert checks["sandbox image"]["status"] == "skipped"
    assert wrong not in out
    assert "TEST-wrong" not in out
    assert set(token) == {"name", "status", "detail", "fix", "needed"}
    assert not (tmp_path / "home").exists()  # the doctor creates nothing


async def test_a_missing_image_is_named_with_the_build_command(
    tmp_path: Path, docker_image: str
) -> None:
    env = base_env(tmp_path, LANCELOT_SANDBOX_IMAGE="nonexistent")
    code, out = await doctor(env, "--json")
    checks = by_name(json.loads(out))
    assert checks["docker engine"]["status"] == "ok"
    image = checks["sandbox image"]
    assert image["status"] == "failed"
    assert "nonexistent is not in the engine" in image["detail"]
    assert image["fix"] == "run `lancelot sandbox build` once"
    assert code == 0  # optional: /run falls back to SafeREPL
    env = base_env(tmp_path, LANCELOT_SANDBOX_IMAGE=docker_image)
    _, out = await doctor(env, "--json")
    assert by_name(json.loads(out))["sandbox image"]["status"] == "ok"


async def test_provider_keys_good_refused_and_unreachable(tmp_path: Path) -> None:
    async with FakeOpenAI() as good, FakeAnthropic() as refusing, FakeGemini() as gemini:
        refusing.fail_next(401)
        dead = closed_port()
        env = base_env(
            tmp_path,
            OPENAI_API_KEY="sk-test-not-real",
            OPENAI_BASE_URL=good.base_url,
            ANTHROPIC_API_KEY="sk-ant-test-not-real",
            ANTHROPIC_BASE_URL=refusing.base_url,
            GEMINI_API_KEY="gemini-test-not-real",
            GEMINI_BASE_URL=f"http://127.0.0.1:{dead}",
        )
        code, out = await doctor(env, "--json")
    assert code == 1
    checks = by_name(json.loads(out))
    assert checks["openai key"]["status"] == "ok"
    anthropic = checks["anthropic key"]
    assert anthropic["status"] == "failed"
    assert "refused the key" in anthropic["detail"]
    assert anthropic["fix"] == "set ANTHROPIC_API_KEY to a valid key"
    unreachable = checks["gemini key"]
    assert unreachable["detail"] == f"cannot reach 127.0.0.1:{dead}: connection refused"
    assert unreachable["fix"] == "check the network, or GEMINI_BASE_URL"
    assert "not-real" not in out
    assert len(refusing.requests) == 1
    assert len(gemini.requests) == 0


async def test_a_slow_peer_times_out_and_the_rest_still_reports(tmp_path: Path) -> None:
    async with FakeTelegram(GOOD_TOKEN) as tg:
        tg.set_delay("getMe", 30)
        env = base_env(
            tmp_path,
            TELEGRAM_BOT_TOKEN=GOOD_TOKEN,
            TELEGRAM_OWNER_ID="1001",
            TELEGRAM_API_BASE_URL=tg.base_url,
        )
        started = time.monotonic()
        code, out = await doctor(env, "--json", "--timeout", "1")
        took = time.monotonic() - started
    assert code == 1
    checks = by_name(json.loads(out))
    assert checks["telegram"]["detail"] == "no answer within 1 s"
    assert checks["home"]["status"] == "ok"
    assert took < 25  # not held for the 30 s the peer sleeps


async def test_broken_settings_and_a_busy_port(tmp_path: Path) -> None:
    config = tmp_path / "bad.yaml"
    config.write_text("web:\n  port: [\n")
    code, out = await doctor(base_env(tmp_path, LANCELOT_CONFIG=str(config)))
    assert code == 1
    assert out.splitlines()[0].startswith(f"✗ settings  {config}: line")
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        env = base_env(tmp_path, LANCELOT_WEB_PORT=str(port), LANCELOT_WEB_PROT="1")
        code, out = await doctor(env, "--json")
    checks = by_name(json.loads(out))
    assert checks["web port"]["detail"] == f"127.0.0.1:{port} is used by another program"
    assert "LANCELOT_WEB_PORT" in checks["web port"]["fix"]
    assert "did you mean LANCELOT_WEB_PORT?" in checks["environment"]["detail"]
    assert code == 1


async def test_a_switch_that_is_neither_on_nor_off_is_named(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    (home / "features.env").write_text("FEATURE_CRUSADER=false\n")
    code, out = await doctor(base_env(tmp_path, FEATURE_AGENT="maybe"), "--json")
    checks = by_name(json.loads(out))
    assert checks["switches"]["status"] == "failed"
    assert "FEATURE_AGENT='maybe'" in checks["switches"]["detail"]
    assert checks["local model"]["status"] != "failed"  # one bad value, reported once
    assert code == 1
    code, out = await doctor(base_env(tmp_path), "--json")
    assert by_name(json.loads(out))["switches"]["detail"].startswith("off: ")
    assert "CRUSADER" in by_name(json.loads(out))["switches"]["detail"]  # features.env read


async def test_receipts_are_verified_and_a_tampered_ledger_fails(tmp_path: Path) -> None:
    env = base_env(tmp_path)
    _, out = await doctor(env, "--json")
    assert by_name(json.loads(out))["receipts"]["status"] == "skipped"  # no ledger yet
    async with spawned(
        sys.executable, "-m", "bot.cli", "chat", env=env, cwd=REPO,
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.DEVNULL,
    ) as chat:  # fmt: skip
        await asyncio.wait_for(chat.communicate(b"/status\n/help\n"), 120)
    code, out = await doctor(env, "--json")
    receipts = by_name(json.loads(out))["receipts"]
    assert receipts["status"] == "ok"
    assert "hash chain intact" in receipts["detail"]
    db = sqlite3.connect(tmp_path / "home" / "ledger.db")
    db.execute("DROP TRIGGER receipts_no_update")
    db.execute("UPDATE receipts SET action_name = 'nothing-to-see' WHERE seq = 3")
    db.commit()
    db.close()
    code, out = await doctor(env, "--json")
    receipts = by_name(json.loads(out))["receipts"]
    assert receipts["status"] == "failed"
    assert receipts["detail"].endswith("at receipt #3")
    assert code == 1


async def test_google_chat_credentials_are_read_with_google_auth(tmp_path: Path) -> None:
    async with FakeGoogle() as google:
        key_file = google.write_service_account(tmp_path / "chat-sa.json")

    def gchat(**env: str) -> dict[str, Any]:
        settings = load_settings(environ={"LANCELOT_HOME": str(tmp_path / "home"), **env})
        [finding] = check_gchat(settings)
        return {"status": str(finding.status), "detail": finding.detail, "fix": finding.fix}

    owner = {"GCHAT_AUDIENCE": "1234567890", "GCHAT_OWNER_EMAIL": "owner@example.org"}
    good = gchat(**owner, GCHAT_SERVICE_ACCOUNT_FILE=str(key_file))
    assert good == {
        "status": "ok",
        "detail": f"service account {SA_EMAIL}; audience 1234567890",
        "fix": "",
    }
    garbled = tmp_path / "garbled.json"
    garbled.write_text("{not json")
    assert gchat(**owner, GCHAT_SERVICE_ACCOUNT_FILE=str(garbled))["detail"] == (
        f"{garbled}: not JSON"
    )
    keyless = tmp_path / "keyless.json"
    keyless.write_text(json.dumps({"type": "service_account", "client_email": SA_EMAIL}))
    refused = gchat(**owner, GCHAT_SERVICE_ACCOUNT_FILE=str(keyless))
    assert refused["detail"].startswith(f"{keyless}: not a service account key")
    assert refused["fix"].startswith("set GCHAT_SERVICE_ACCOUNT_FILE")
    absent = gchat(**owner, GCHAT_SERVICE_ACCOUNT_FILE=str(tmp_path / "absent.json"))
    assert "cannot read (No such file or directory)" in absent["detail"]
    unowned = gchat(GCHAT_AUDIENCE="1234567890")
    assert unowned["detail"] == "none yet: the first to send the pairing code becomes it"
    assert unowned["fix"] == "run `lancelot run` and send the bot the pairing code it prints"
    OwnerStore(tmp_path / "home").save(
        PairedOwner("gchat", "owner@example.org", "", "2026-11-26T22:00:00+00:00")
    )
    paired = gchat(GCHAT_AUDIENCE="1234567890", GCHAT_SERVICE_ACCOUNT_FILE=str(key_file))
    assert paired["detail"] == f"service account {SA_EMAIL}; audience 1234567890"
    no_audience = gchat(GCHAT_OWNER_EMAIL="owner@example.org")
    assert no_audience["detail"] == "GCHAT_AUDIENCE is not set, so the endpoint is off"
    assert gchat()["status"] == "skipped"


def test_the_local_model_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("FEATURE_LOCAL_MODEL", raising=False)
    gguf = tmp_path / "model.gguf"

    def local(**env: str) -> Finding:
        settings = load_settings(environ={"LANCELOT_HOME": str(tmp_path / "home"), **env})
        [finding] = check_local_model(settings)
        return finding

    missing = local(LANCELOT_LOCAL_MODEL=str(gguf))
    assert missing.detail == f"LANCELOT_LOCAL_MODEL: {gguf} is not a file"
    assert missing.needed
    gguf.write_bytes(b"GGUF" + bytes(2 * 1024 * 1024))
    if importlib.util.find_spec("llama_cpp") is None:
        assert local(LANCELOT_LOCAL_MODEL=str(gguf)).detail == "llama-cpp-python is not installed"
    else:
        assert local(LANCELOT_LOCAL_MODEL=str(gguf)).detail == f"{gguf} (2 MB)"
    monkeypatch.setenv("FEATURE_LOCAL_MODEL", "false")
    assert local(LANCELOT_LOCAL_MODEL=str(gguf)).detail == "off (FEATURE_LOCAL_MODEL)"


async def test_the_webhook_state_is_read_from_get_webhook_info(tmp_path: Path) -> None:
    dead = f"http://127.0.0.1:{closed_port()}/telegram"
    async with FakeTelegram(GOOD_TOKEN) as tg:
        env = base_env(
            tmp_path,
            TELEGRAM_BOT_TOKEN=GOOD_TOKEN,
            TELEGRAM_OWNER_ID="1001",
            TELEGRAM_API_BASE_URL=tg.base_url,
            TELEGRAM_WEBHOOK_URL=dead,
        )
        _, out = await doctor(env, "--json")
        assert by_name(json.loads(out))["telegram webhook"]["detail"] == (
            "Telegram has no webhook, not TELEGRAM_WEBHOOK_URL"
        )
        async with aiohttp.ClientSession() as http:
            await http.post(f"{tg.base_url}{GOOD_TOKEN}/setWebhook", data={"url": dead})
        tg.user_message("hello")
        with pytest.raises(aiohttp.ClientConnectorError):
            await tg.deliver_webhook()  # nobody listens there: Telegram notes the error
        code, out = await doctor(env, "--json")
    hook = by_name(json.loads(out))["telegram webhook"]
    assert hook["status"] == "failed"
    assert hook["detail"].startswith(f"{dead}: the last delivery failed 0 min ago: ")
    assert hook["detail"].endswith("; 1 update waiting")
    assert hook["fix"] == "make TELEGRAM_WEBHOOK_URL reachable from the internet over https"
    assert code == 1


async def test_a_clock_ten_minutes_off_a_peer_is_named(tmp_path: Path) -> None:
    async def late(request: web.Request) -> web.Response:
        then = datetime.now(UTC) - timedelta(minutes=10)
        return web.Response(headers={"Date": format_datetime(then, usegmt=True)})

    peer = web.Application()
    peer.router.add_route("*", "/{tail:.*}", late)
    runner = web.AppRunner(peer)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", 0).start()
    port = runner.addresses[0][1]
    try:
        settings = load_settings(
            environ={
                "LANCELOT_HOME": str(tmp_path / "home"),
                "TELEGRAM_BOT_TOKEN": GOOD_TOKEN,
                "TELEGRAM_API_BASE_URL": f"http://127.0.0.1:{port}/bot",
            }
        )
        [finding] = await check_clock(settings, CHANNELS)
    finally:
        await runner.cleanup()
    seconds, _, rest = finding.detail.partition(" s ahead of ")
    assert 598 <= int(seconds) <= 602  # the Date header's one-second grain, and the trip
    assert rest == f"127.0.0.1:{port}"
    assert finding.needed  # signed Google tokens allow about five minutes
    assert finding.fix == "turn on time sync (timedatectl set-ntp true)"


def test_a_port_held_by_this_homes_lancelot_is_fine(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    with socket.socket() as held, home_lock(home):
        held.bind(("127.0.0.1", 0))
        held.listen()
        port = held.getsockname()[1]
        settings = load_settings(
            environ={"LANCELOT_HOME": str(home), "LANCELOT_WEB_PORT": str(port)}
        )
        [ours] = check_port(settings)
    assert (
        ours.detail
        == f"127.0.0.1:{port} is served by the Lancelot of this home (pid {os.getpid()})"
    )
    assert str(ours.status) == "ok"


async def test_json_alone_names_a_refused_provider_and_an_unknown_switch(tmp_path: Path) -> None:
    """The openai SDK's aiohttp transport calls a refused connection a timeout; the doctor
    says refused. An unknown FEATURE_ name is a finding, not a line on stderr."""
    dead = closed_port()
    env = base_env(
        tmp_path,
        OPENAI_API_KEY="sk-test-not-real",
        OPENAI_BASE_URL=f"http://127.0.0.1:{dead}/v1",
        FEATURE_CRUSADR="false",
    )
    code, out = await doctor(env, "--json")
    assert code == 1
    checks = by_name(json.loads(out))
    assert checks["openai key"]["detail"] == f"cannot reach 127.0.0.1:{dead}: connection refused"
    assert (
        "FEATURE_CRUSADR is not one of Lancelot's switches; did you mean FEATURE_CRUSADER?"
        in (checks["environment"]["detail"])
    )
