"""A tiny MCP server on the Python standard library alone, speaking JSON-RPC over stdio (one
message a line), so it runs where no package can be installed: inside the sandbox image
(whose python3-minimal lacks `json`: the test puts the standard library's own pure-Python
`json` package beside this script). Its tools report what a server can see and do from where
it runs.

- `identity`: its uid, whether it runs in a container, how `/` is mounted, its effective
  and bounding capabilities, its no-new-privileges flag, its network interfaces (no traffic sent);
- `read`: a file's text (`path`);
- `variable`: one environment variable's value (`name`), or null.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from typing import Any

VERSION = "2025-06-18"
TEXT = {"type": "string"}


def _status(field: str) -> str:
    with open("/proc/self/status", encoding="utf-8") as handle:
        found = [line.split(":", 1)[1].strip() for line in handle if line.startswith(field + ":")]
    return found[0] if found else ""


def _root_options() -> list[str]:
    with open("/proc/mounts", encoding="utf-8") as handle:
        roots = [line.split()[3] for line in handle if line.split()[1] == "/"]
    return roots[-1].split(",") if roots else []


def identity(_: dict[str, Any]) -> object:
    return {
        "uid": os.getuid(),
        "in_container": os.path.exists("/.dockerenv"),
        "root_read_only": "ro" in _root_options(),
        "capabilities": _status("CapEff"),
        "capability_bound": _status("CapBnd"),
        "no_new_privileges": _status("NoNewPrivs") == "1",
        "interfaces": sorted(os.listdir("/sys/class/net")),
    }


def read(arguments: dict[str, Any]) -> object:
    try:
        with open(arguments["path"], encoding="utf-8") as handle:
            return {"text": handle.read()}
    except OSError as exc:
        return {"error": f"{type(exc).__name__}: {exc}"}


def variable(arguments: dict[str, Any]) -> object:
    return {"value": os.environ.get(arguments["name"])}


TOOLS: dict[str, tuple[Callable[[dict[str, Any]], object], dict[str, Any]]] = {
    "identity": (identity, {}),
    "read": (read, {"path": TEXT}),
    "variable": (variable, {"name": TEXT}),
}


def listed() -> list[dict[str, Any]]:
    return [
        {
            "name": name,
            "description": f"Tells what the server's {name} is, where it runs.",
            "inputSchema": {"type": "object", "properties": properties},
            "annotations": {"readOnlyHint": True, "openWorldHint": False},
        }
        for name, (_, properties) in TOOLS.items()
    ]


def answer(method: str, params: dict[str, Any]) -> object:
    if method == "initialize":
        return {
            "protocolVersion": params.get("protocolVersion", VERSION),
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "probe", "version": "1"},
        }
    if method == "tools/list":
        return {"tools": listed()}
    if method == "tools/call":
        run, _ = TOOLS[params["name"]]
        said = json.dumps(run(params.get("arguments") or {}))
        return {"content": [{"type": "text", "text": said}], "isError": False}
    if method == "ping":
        return {}
    raise KeyError(method)


def main() -> None:
    for line in sys.stdin:
        message = json.loads(line)
        if "id" not in message:
            continue  # a notification (initialized, cancelled): nothing to answer
        reply: dict[str, Any] = {"jsonrpc": "2.0", "id": message["id"]}
        try:
            reply["result"] = answer(message["method"], message.get("params") or {})
        except KeyError as exc:
            reply["error"] = {"code": -32601, "message": f"unknown: {exc}"}
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
