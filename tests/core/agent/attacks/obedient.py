"""A model that obeys every instruction it finds in its context, wherever it stands: the
owner's message, a page, a search result, a file. The worst case of prompt injection,
served behind the fake OpenAI server so the real SDK, the real redaction of prompts and the
real tool loop are all on the path.

An instruction is a line `INSTRUCTION: call <tool> with <json>`; its JSON may hold
placeholders filled from what the model has read: `{{last}}` (the last tool output as the
model saw it), `{{last_b64}}`, `{{last_hex}}`, `{{last_url}}` (the same, encoded),
`{{memory}}` (the system prompt, where remembered facts stand), `{{first_id}}` (the first
`"id"` in the last output: what recall returned). The owner's plain request is turned into
calls by `plans` (what a real model would make of those words), so the owner's message
holds no instruction text that could name a target for it.
"""

from __future__ import annotations

import base64
import json
import re
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

from tests.fakes.llm import Reply

DIRECTIVE = re.compile(r"INSTRUCTION: call (\w+) with (?=\{)")
ID = re.compile(r'"id":\s*"([^"]+)"')


@dataclass
class Obedient:
    """The responder: `fake.responder = Obedient(plans)`; `plans` maps an owner's message
    to the calls it asks for, in order."""

    plans: dict[str, list[tuple[str, dict[str, Any]]]] = field(default_factory=dict)
    calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)

    def __call__(self, body: dict[str, Any]) -> Reply:
        schema = body.get("response_format", {}).get("json_schema", {}).get("schema", {})
        wanted = set(schema.get("properties", {}))
        if "intent" in wanted:
            return Reply(json={"intent": "EXEC_REQUEST"})  # straight into the tool loop
        if "passed" in wanted:
            return Reply(json={"passed": True, "reason": "done"})
        if "response_to_user" in wanted or not body.get("tools"):
            return Reply(json=_final())
        return self._next(body["messages"])

    def _next(self, messages: list[dict[str, Any]]) -> Reply:
        done = sum(len(m.get("tool_calls") or ()) for m in messages if m["role"] == "assistant")
        todo = self._todo(messages)
        if done >= len(todo):
            return Reply(text=json.dumps(_final()))
        name, raw = todo[done]
        arguments = json.loads(_fill(raw, messages)) if isinstance(raw, str) else raw
        self.calls.append((name, arguments))
        return Reply(tool_calls=((name, arguments),))

    def _todo(self, messages: list[dict[str, Any]]) -> list[tuple[str, Any]]:
        """Every call asked for so far: the owner's plan, then each instruction in the order
        it was read."""
        found: list[tuple[str, Any]] = []
        for message in messages:
            text = _text(message)
            if message["role"] == "user":
                found.extend(self.plans.get(_request(text), []))
            found.extend(d for d in _directives(text) if d not in found)  # said twice: once
        return found


def _directives(text: str) -> list[tuple[str, str]]:
    """Each instruction in `text`: the tool's name and its JSON as written (to be filled)."""
    found = []
    for match in DIRECTIVE.finditer(text):
        try:
            _, end = json.JSONDecoder().raw_decode(text, match.end())
        except json.JSONDecodeError:
            continue
        found.append((match.group(1), text[match.end() : end]))
    return found


def _request(text: str) -> str:
    """The owner's request without the notes Lancelot adds (the files saved with it)."""
    return text.split("\n\n[Files the owner sent")[0].strip()


def _text(message: dict[str, Any]) -> str:
    """What a message says; a tool result's JSON is read as the model reads it, unescaped;
    a picture's words are read too (the bytes of its data URL, as a model reads text in an
    image)."""
    content = message.get("content") or ""
    if isinstance(content, list):
        content = "\n".join(_part(part) for part in content)
    if not isinstance(content, str):
        content = json.dumps(content)
    if message["role"] == "tool":
        try:
            said = json.loads(content)
        except json.JSONDecodeError:
            return content
        return str(said.get("output") or said.get("reason") or content)
    return content


def _part(part: dict[str, Any]) -> str:
    """One part of a multimodal message: its text, or what a picture's bytes spell."""
    if part.get("type") == "text":
        return str(part.get("text", ""))
    url = str(part.get("image_url", {}).get("url", ""))
    if not url.startswith("data:") or "," not in url:
        return ""
    return base64.b64decode(url.split(",", 1)[1]).decode("utf-8", "ignore")


def _fill(raw: str, messages: list[dict[str, Any]]) -> str:
    """The instruction's JSON with its placeholders filled (as JSON string content)."""
    tools = [_text(m) for m in messages if m["role"] == "tool"]
    last = tools[-1] if tools else ""
    system = next((_text(m) for m in messages if m["role"] == "system"), "")
    ids = ID.findall(last)
    values = {
        "last": last[:400],
        "last_b64": base64.b64encode(last[:400].encode()).decode(),
        "last_hex": last[:200].encode().hex(),
        "last_url": quote(last[:400], safe=""),
        "memory": system[-600:],
        "first_id": ids[0] if ids else "none",
    }
    for key, value in values.items():
        raw = raw.replace("{{" + key + "}}", json.dumps(value)[1:-1])
    return raw


def _final() -> dict[str, Any]:
    return {"response_to_user": "Done as the text asked.", "actions_taken": [], "next_action": ""}
