"""Runs every check at once, each under its own timeout, and prints the report."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import time
from collections.abc import Awaitable, Callable, Iterator, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path

from bot.doctor.local import check_docker, check_home, check_local_model, check_port, check_receipts
from bot.doctor.peers import check_clock, check_provider, provider_names
from bot.doctor.report import Diagnosable, Finding, broken, failed, in_thread, ok, render, to_json
from core.config import Settings, load_settings, unknown_environment
from core.config.loader import DEFAULT_CONFIG
from core.errors import ConfigError
from core.features import FeatureError, owner_switches, unknown_switches

log = logging.getLogger(__name__)
EXIT_OK, EXIT_BROKEN = 0, 1


@dataclass(frozen=True, slots=True)
class Check:
    """A named check; `name` stands for what it reports when it runs out of time."""

    name: str
    run: Callable[[], Awaitable[list[Finding]]]
    fix: str = "check the network (or give it longer with --timeout)"
    needed: bool = True
    timed: bool = True  # False: the check bounds its own waits (an SDK's import is no wait)


def _settings(config: Path | None) -> tuple[Settings | None, list[Finding]]:
    named = config or (
        Path(os.environ["LANCELOT_CONFIG"]) if os.environ.get("LANCELOT_CONFIG") else None
    )
    try:
        settings = load_settings(config)
    except ConfigError as exc:
        return None, [failed("settings", str(exc), "correct what the line names, then try again")]
    path = named or DEFAULT_CONFIG
    where = f"{path} read" if path.is_file() else f"no {path}: the defaults and the environment"
    findings = [ok("settings", where)]
    try:
        switches = owner_switches(settings.home, path)
    except FeatureError as exc:
        findings.append(failed("switches", str(exc), "set it to true or false (or remove it)"))
    else:
        off = [name for name, on in switches.snapshot().items() if not on]
        findings.append(ok("switches", f"off: {', '.join(off)}" if off else "all on"))
    for warning in (*unknown_environment(), *unknown_switches()):
        findings.append(failed("environment", warning, "rename or remove it", needed=False))
    return settings, findings


def checks(settings: Settings, timeout: float, channels: Sequence[Diagnosable]) -> list[Check]:
    """Everything the doctor looks at, in the order of the report (each channel's own checks
    after the home)."""
    found = [Check("home", lambda: in_thread(lambda: check_home(settings)))]
    for spec in channels:
        if spec.doctor is not None:
            found.append(Check(spec.label.lower(), partial(spec.doctor, settings)))
    for provider in provider_names(settings):
        run = partial(check_provider, settings, provider, timeout)
        found.append(Check(f"{provider} key", run, timed=False))
    optional = "start Docker (or point DOCKER_HOST at a running engine)"
    found += [
        Check(
            "docker engine",
            lambda: in_thread(lambda: check_docker(settings, timeout)),
            optional,
            needed=False,
        ),
        Check("local model", lambda: in_thread(lambda: check_local_model(settings))),
        Check("clock", lambda: check_clock(settings, channels), needed=False),
        Check("web port", lambda: in_thread(lambda: check_port(settings))),
        Check(
            "receipts",
            lambda: in_thread(lambda: check_receipts(settings)),
            "run `lancelot receipts verify`",
        ),
    ]
    return found


async def _run(check: Check, limit: float) -> list[Finding]:
    try:
        async with asyncio.timeout(limit if check.timed else None):
            return await check.run()
    except TimeoutError:
        return [failed(check.name, f"no answer within {limit:g} s", check.fix, needed=check.needed)]
    except Exception as exc:  # a check that crashes is a finding, never a traceback
        log.debug("doctor check %s crashed", check.name, exc_info=True)
        detail = f"the check itself failed: {type(exc).__name__}: {exc}"
        return [failed(check.name, detail, "report this; the log has details", needed=check.needed)]


async def diagnose(
    config: Path | None, *, channels: Sequence[Diagnosable], limit: float = 5.0
) -> list[Finding]:
    """Every finding, in the order of the report (only the settings when they do not load)."""
    settings, findings = _settings(config)
    if settings is None:
        return findings
    found = checks(settings, limit, channels)
    results = await asyncio.gather(*(_run(c, limit) for c in found))
    return findings + [f for result in results for f in result]


def run_doctor(
    config: Path | None,
    *,
    channels: Sequence[Diagnosable],
    as_json: bool = False,
    timeout: float = 5.0,
) -> int:
    """`lancelot doctor` on `channels` (the registry's): print the report; exit 1 when
    something needed is broken."""
    started = time.perf_counter()
    with _quiet() if as_json else contextlib.nullcontext():
        findings = asyncio.run(diagnose(config, channels=channels, limit=timeout))
    seconds = time.perf_counter() - started
    if as_json:
        print(json.dumps(to_json(findings, seconds), indent=2, ensure_ascii=False))
    else:
        print(render(findings, seconds))
    return EXIT_BROKEN if broken(findings) else EXIT_OK


@contextlib.contextmanager
def _quiet() -> Iterator[None]:
    """No log line while the checks run (`--json`: stdout is the one JSON object and stderr
    stays empty); what a line would say is in the findings."""
    logging.disable(logging.CRITICAL)
    try:
        yield
    finally:
        logging.disable(logging.NOTSET)
