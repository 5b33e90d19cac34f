"""Lancelot's edges: the CLI, the composition root, channels and the web app."""

import sys

# httpx's package imports its own command-line client (httpx._main) whenever click, rich and
# pygments are installed (click comes with the mcp SDK, rich and pygments with the dev tools):
# about 90 modules and 5 MB in every process that imports httpx (python-telegram-bot does),
# used by none of Lancelot's. None in sys.modules makes that one import fail, and httpx then
# defines its fallback `main` (the `httpx` command runs in a process of its own).
if "httpx" not in sys.modules:
    sys.modules["httpx._main"] = None  # type: ignore[assignment]
