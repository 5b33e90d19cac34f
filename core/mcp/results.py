"""A tool call's answer as bounded text: each content block said in words, the whole cut at a
limit that the cut text announces (the model must not take a cut answer for a whole one)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import mcp_types


def block_text(block: Any) -> str:
    """One content block as text: text as is, anything else named with its size."""
    kind = getattr(block, "type", None)
    if kind == "text":
        return str(block.text)
    if kind in ("image", "audio"):
        return f"[{kind} {block.mime_type}, {len(block.data) * 3 // 4} bytes]"
    if kind == "resource_link":
        return f"[resource link {block.uri}: {block.name}]"
    if kind == "resource":
        inner = block.resource
        text = getattr(inner, "text", None)
        if text is not None:
            return str(text)
        return f"[resource {inner.uri}, {len(getattr(inner, 'blob', '')) * 3 // 4} bytes]"
    return f"[{kind or 'unknown'} content]"


def cut(text: str, limit: int) -> tuple[str, bool]:
    """`text` within `limit` characters (the notice included), and whether it was cut."""
    if len(text) <= limit:
        return text, False
    notice = f"\n[cut: the first {{shown}} of {len(text)} characters]"
    shown = max(0, limit - len(notice.format(shown=limit)))
    return text[:shown] + notice.format(shown=shown), True


def structured_within(value: Any, limit: int) -> Any:
    """The structured content when its JSON fits in `limit` characters, else None."""
    if value is None:
        return None
    try:
        size = len(json.dumps(value, ensure_ascii=False))
    except (TypeError, ValueError):
        return None
    return value if size <= limit else None


def answer_text(result: mcp_types.CallToolResult) -> str:
    """Every content block of the answer, one after the other."""
    return "\n".join(block_text(block) for block in result.content)
