"""Constrained decoding of a JSON enum on llama-cpp: only the options' tokens can be chosen.

A GBNF grammar gives the same greedy answer, but llama-cpp runs the grammar over the whole
vocabulary (262k tokens for Gemma) for every generated token, several times the cost of the
model itself. Here each option is tokenized once, tokens that every remaining option shares
are appended without sampling, and the model's logits decide only where options differ:
a label usually costs one forward pass over the new prompt tokens.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class Choice:
    """The option chosen, as its JSON text, and how many tokens it stands for."""

    text: str
    tokens: int


def enum_options(schema: dict[str, Any] | None) -> list[str] | None:
    """The string values of a schema that is just an enum of strings, else None."""
    if not schema or set(schema) - {"enum", "type", "description", "title"}:
        return None
    values = schema.get("enum")
    if not isinstance(values, list) or not values or not all(isinstance(v, str) for v in values):
        return None
    return list(dict.fromkeys(values))


@dataclass(frozen=True, slots=True)
class EnumShape:
    """An answer that is one of `options`: bare, or as the only field of an object."""

    options: list[str]
    field: str | None = None

    @property
    def lead(self) -> str:
        """The JSON written before the value (a grammar would force it too)."""
        return "" if self.field is None else "{" + json.dumps(self.field) + ": "

    def wrap(self, choice: str) -> str:
        """The whole JSON answer around the chosen value's JSON string."""
        return choice if self.field is None else self.lead + choice + "}"


def enum_shape(schema: dict[str, Any] | None) -> EnumShape | None:
    """`{"enum": [...]}`, or an object whose one required property is such an enum."""
    options = enum_options(schema)
    if options is not None:
        return EnumShape(options)
    if not schema or schema.get("type") != "object":
        return None
    properties = schema.get("properties")
    if not isinstance(properties, dict) or len(properties) != 1:
        return None
    ((name, inner),) = properties.items()
    options = enum_options(inner) if isinstance(inner, dict) else None
    if options is None or schema.get("required") != [name]:
        return None
    return EnumShape(options, name)


def choose(llama: Any, prompt: list[int], options: list[str]) -> Choice:
    """Greedy decoding of `prompt` restricted to the JSON strings of `options` (blocking)."""
    encoded = {o: _tokens(llama, json.dumps(o)) for o in options}
    alive = dict(encoded)
    pending = list(prompt)
    chosen: list[int] = []
    while len(alive) > 1:
        position = len(chosen)
        ended = [o for o, seq in alive.items() if len(seq) == position]
        following = {seq[position] for seq in alive.values() if len(seq) > position}
        if len(following) == 1 and not ended:
            token = following.pop()  # every option agrees: no need to ask the model
        else:
            logits = _next_logits(llama, pending)
            candidates = following | ({llama.token_eos()} if ended else set())
            token = max(candidates, key=lambda t: float(logits[t]))
            if ended and token == llama.token_eos():
                alive = {ended[0]: alive[ended[0]]}
                break
        chosen.append(token)
        pending.append(token)
        alive = {o: s for o, s in alive.items() if len(s) > position and s[position] == token}
    option = next(iter(alive))
    return Choice(json.dumps(option), len(encoded[option]))


def _tokens(llama: Any, text: str) -> list[int]:
    return list(llama.tokenize(text.encode(), add_bos=False, special=False))


def _next_logits(llama: Any, tokens: list[int]) -> Any:
    """The logits after `tokens`; llama-cpp reuses the cached prefix of the last call."""
    captured: list[Any] = []

    def grab(_ids: Any, logits: Any) -> Any:
        captured.append(logits.copy())
        return logits

    generator = llama.generate(tokens, temp=0.0, logits_processor=[grab])
    try:
        next(generator)
    finally:
        generator.close()
    return captured[0]
