"""`lancelot setup`: asks for the model provider keys in the terminal (never echoed, never in
the chat history), checks each with a one-token call, and keeps the ones that answered in
LANCELOT_HOME/secrets.env (0600)."""

from __future__ import annotations

import asyncio
import getpass
import os
from collections.abc import Callable

from pydantic import SecretStr

from core.config import Settings
from core.config.secrets_file import SECRETS_FILE, write_secrets
from core.llm.key_check import KeyCheck, check_key
from core.llm.providers import FLAGSHIPS, KEY_NAMES

CHECK_SECONDS = 15.0
Ask = Callable[[str], str]
Say = Callable[[str], None]


def run_setup(settings: Settings, *, ask: Ask = getpass.getpass, say: Say = print) -> int:
    """Ask for each provider's key (Enter skips one; the end of input, Ctrl-D, skips the
    rest), check and keep the good ones. Exit code 1 when a key typed was refused or could
    not be checked (it is not kept); 130 after Ctrl-C, with nothing kept."""
    try:
        return _run_setup(settings, ask, say)
    except KeyboardInterrupt:
        say("\nSetup cancelled: nothing was kept.")
        return 130


def _run_setup(settings: Settings, ask: Ask, say: Say) -> int:
    say(
        "Lancelot setup: paste each model provider key you have (nothing is shown as you "
        "type); press Enter to skip one. Each key is checked with a one-token call."
    )
    good: dict[str, str] = {}
    failed = False
    for provider in FLAGSHIPS:
        name = KEY_NAMES[provider]
        if os.environ.get(name):
            say(f"  {name} is set in the environment, which wins over the file.")
        try:
            key = ask(f"{name}: ").strip()
        except EOFError:
            say("")  # the end of input: the keys not asked yet are skipped
            break
        if not key:
            continue
        check = asyncio.run(_check(settings, provider, key))
        if check.ok:
            say(f"✓ {provider}: {check.detail}")
            good[name] = key
        else:
            say(f"✗ {provider}: {check.detail}; not kept")
            failed = True
    if good:
        try:
            path = write_secrets(settings.home, good)
        except OSError as exc:
            say(f"✗ cannot write {settings.home / SECRETS_FILE}: {exc.strerror or exc}")
            say("Check LANCELOT_HOME (it must be a directory you can write); nothing was kept.")
            return 2
        say(f"Kept {', '.join(sorted(good))} in {path} (only you can read it).")
        say("Restart Lancelot to use them; in chat, /start setup chooses the provider.")
    elif not failed:
        say("No key given; nothing changed.")
    return 1 if failed else 0


async def _check(settings: Settings, provider: str, key: str) -> KeyCheck:
    llm = settings.llm.model_copy(update={f"{provider}_api_key": SecretStr(key)})
    return await check_key(llm, provider, CHECK_SECONDS)
