"""Every FEATURE_* switch named anywhere (README, docs, config, code, the Soul) is one Lancelot
knows, and each one switches something the owner would notice: with it off, the behaviour is
gone. Switches read at every use are flipped in the running app (as /features or SIGHUP do);
those read once at assembly get an app of their own."""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest

from bot.app import Lancelot, assemble
from core.config import load_settings
from core.features import AT_START, DEFAULTS, NO_COUNTERPART, SPEC_NAMES, FeatureFlags
from core.governance.policy import Verdict
from core.scheduler.config import JobSpec
from core.tools.action import ToolAction
from core.tools.sandbox.host import HostShell
from tests.fakes.channel import MemoryChannel
from tests.fakes.owner import say
from tests.fakes.scripted_model import RouterRelay, ScriptedRouter, final

ROOT = Path(__file__).resolve().parents[2]
SCANNED = ("README.md", "docs", "config", "core", "bot", "soul", "skills")
NAME = re.compile(r"FEATURE_[A-Z][A-Z_]*[A-Z]")

Probe = Callable[[Lancelot, MemoryChannel], Awaitable[bool]]


def named_anywhere() -> set[str]:
    found: set[str] = set()
    for top in SCANNED:
        path = ROOT / top
        files = [path] if path.is_file() else list(path.rglob("*"))
        for file in files:
            if file.suffix in {".py", ".md", ".yaml", ".yml", ".toml", ".env"}:
                found |= set(NAME.findall(file.read_text(encoding="utf-8")))
    return {name.removeprefix("FEATURE_") for name in found}


async def help_text(app: Lancelot, phone: MemoryChannel) -> str:
    return (await say(app, phone, "/help")).body


async def soul(app: Lancelot, phone: MemoryChannel) -> bool:
    return "/run" in await help_text(app, phone)


async def skills(app: Lancelot, phone: MemoryChannel) -> bool:
    return "/skills" in await help_text(app, phone)


async def memory(app: Lancelot, phone: MemoryChannel) -> bool:
    return "/memory" in await help_text(app, phone)


async def local_model(app: Lancelot, phone: MemoryChannel) -> bool:
    return "no local model" not in dict((await say(app, phone, "/status")).fields)["Models"]


async def agent(app: Lancelot, phone: MemoryChannel) -> bool:
    return "FEATURE_AGENT" not in (await say(app, phone, "hello there")).body


async def scheduler(app: Lancelot, phone: MemoryChannel) -> bool:
    spec = JobSpec.model_validate({"name": "probe", "run": "builtin:noop", "every_seconds": 60})
    refusal = await app.scheduler.gates.check(spec, approved=True)
    return refusal is None or refusal.gate != "kill_switch"


PROBE_FAILS: list[str | None] = [None]  # what the probe's own health check answers


async def probe_check() -> str | None:
    return PROBE_FAILS[0]


async def health(app: Lancelot, phone: MemoryChannel) -> bool:
    """A part goes from healthy to failing: does an alert card reach the phone?"""
    if not app.health.has_check("probe"):
        app.health.register("probe", probe_check)
        app.health.mark_ready()  # as the runner does once channels are attached
    PROBE_FAILS[0] = None
    await app.alerts.observe(await app.health.check())  # recovered (if it was failing)
    before = len(phone.delivered)
    PROBE_FAILS[0] = "probe: broken"
    await app.alerts.observe(await app.health.check())
    return any("probe: broken" in card.body for _, card in phone.delivered[before:])


async def crusader(app: Lancelot, phone: MemoryChannel) -> bool:
    await say(app, phone, "/crusader on")
    assert app.governance is not None
    commit = ToolAction("shell.exec", "git commit -m nightly", {"in_workspace": True})
    return app.governance.policy.decide(commit, autonomous=True).verdict is Verdict.ALLOW


async def safe_mode(app: Lancelot, phone: MemoryChannel) -> bool:
    return dict((await say(app, phone, "/status")).fields)["Tools"].startswith("safe mode")


async def tools_network(app: Lancelot, phone: MemoryChannel) -> bool:
    assert app.governance is not None
    action = ToolAction("net.request", None, {"method": "GET", "url": "https://example.org/"})
    outcome = await app.governance.gateway.run(action, via="test", parent_id="p", quest_id=None)
    return "FEATURE_TOOLS_NETWORK" not in (outcome.reason + outcome.text + outcome.output)


async def tools_host_execution(app: Lancelot, phone: MemoryChannel) -> bool:
    assert app.governance is not None
    (host,) = [
        r for r in app.governance.tools.providers("shell.exec") if isinstance(r.runner, HostShell)
    ]
    assert host.health is not None
    return await host.health() is None  # the router skips it while it answers a reason


RELAY = RouterRelay()  # the agent's model in the apps these probes run in


async def model_calls(app: Lancelot, phone: MemoryChannel, task_type: str) -> bool:
    router = ScriptedRouter([final("Done.")] * 6)
    RELAY.target = router
    await say(app, phone, "what would be a good plan to organise my notes?")
    return any(call.task_type == task_type for call in router.calls)


async def unified_classification(app: Lancelot, phone: MemoryChannel) -> bool:
    return await model_calls(app, phone, "intent")


async def deep_reasoning_loop(app: Lancelot, phone: MemoryChannel) -> bool:
    return await model_calls(app, phone, "deep_reasoning")


PROBES: dict[str, Probe] = {
    "SOUL": soul,
    "SKILLS": skills,
    "MEMORY": memory,
    "LOCAL_MODEL": local_model,
    "AGENT": agent,
    "SCHEDULER": scheduler,
    "HEALTH": health,
    "CRUSADER": crusader,
    "SAFE_MODE": safe_mode,
    "TOOLS_NETWORK": tools_network,
    "TOOLS_HOST_EXECUTION": tools_host_execution,
    "UNIFIED_CLASSIFICATION": unified_classification,
    "DEEP_REASONING_LOOP": deep_reasoning_loop,
}


def test_every_switch_named_anywhere_is_known_and_has_a_probe() -> None:
    named = named_anywhere() - set(SPEC_NAMES) - set(NO_COUNTERPART)  # the spec's, documented
    assert named <= set(DEFAULTS), named - set(DEFAULTS)
    assert set(DEFAULTS) <= named, set(DEFAULTS) - named  # each one documented somewhere
    assert set(PROBES) == set(DEFAULTS)


def test_every_switch_the_code_reads_is_known() -> None:
    read = re.compile(r"""enabled\(\s*["']([A-Z_]+)["']\s*\)""")
    found = {m for f in (ROOT / "bot").rglob("*.py") for m in read.findall(f.read_text())}
    found |= {m for f in (ROOT / "core").rglob("*.py") for m in read.findall(f.read_text())}
    assert found <= set(DEFAULTS), found - set(DEFAULTS)


@pytest.mark.parametrize("name", sorted(PROBES))
async def test_switched_off_the_behaviour_is_gone(name: str, tmp_path: Path) -> None:
    env = {
        "LANCELOT_HOME": str(tmp_path / "home"),
        "LANCELOT_LOCAL_MODEL": str(tmp_path / "none.gguf"),
    }
    settings = load_settings(environ=env)
    probe = PROBES[name]
    base = {"FEATURE_LOCAL_MODEL": "false"}
    if name in AT_START:
        seen = []
        for value in ("true", "false"):
            flags = FeatureFlags({**base, f"FEATURE_{name}": value})
            async with assemble(settings, web=False, features=flags) as app:
                phone = MemoryChannel()
                await app.attach(phone)
                seen.append(await probe(app, phone))
        assert seen == [True, False]
        return
    flags = FeatureFlags({**base, f"FEATURE_{name}": "true"})
    async with assemble(settings, web=False, features=flags, models=RELAY) as app:
        phone = MemoryChannel()
        await app.attach(phone)
        on = await probe(app, phone)
        flags.set(name, False)  # live, as a /features toggle or SIGHUP applies it
        off = await probe(app, phone)
        flags.set(name, True)
        again = await probe(app, phone)
    assert (on, off, again) == (True, False, True)
