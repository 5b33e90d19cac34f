"""Starting Lancelot imports no model SDK: each costs about half a second and tens of MB, and
loads on first use instead (a model call, a voice note)."""

from __future__ import annotations

import json
import subprocess
import sys

SDKS = ("openai", "anthropic", "google.genai", "llama_cpp")


def test_the_app_and_its_wiring_import_no_model_sdk() -> None:
    probe = (
        "import json, sys\n"
        "import bot.app, bot.cli, bot.runner, bot.files, bot.llm\n"
        f"print(json.dumps([m for m in {SDKS!r} if m in sys.modules]))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=120
    )
    assert json.loads(done.stdout) == []
