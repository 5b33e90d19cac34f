"""Telegram's HTML parse mode, ported from tdlib's `parse_html` to reject what Telegram rejects.

Offsets in error messages are UTF-8 byte offsets into the markup, as in Telegram's own messages;
entity offsets and lengths are UTF-16 code units, as in the Bot API.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

SUPPORTED_TAGS = frozenset(
    {
        "a", "b", "strong", "i", "em", "u", "ins", "s", "strike", "del",
        "span", "tg-spoiler", "tg-emoji", "code", "pre", "blockquote",
    }
)  # fmt: skip
_ENTITY_TYPES = {
    "b": "bold", "strong": "bold", "i": "italic", "em": "italic",
    "u": "underline", "ins": "underline", "s": "strikethrough", "strike": "strikethrough",
    "del": "strikethrough", "tg-spoiler": "spoiler", "span": "spoiler",
}  # fmt: skip
_NAMED_ENTITIES = {b"lt": ord("<"), b"gt": ord(">"), b"amp": ord("&"), b"quot": ord('"')}
_SPACES = frozenset(b" \t\r\n\v\f\0")


class EntityParseError(ValueError):
    """The markup is not valid Telegram HTML; the message is Telegram's own wording."""


@dataclass(frozen=True)
class FormattedText:
    """What a phone shows: the text after markup is applied, and its Bot API entities."""

    text: str
    entities: tuple[dict[str, Any], ...] = ()


def utf16_len(text: str) -> int:
    """Length in UTF-16 code units, the unit of Bot API entity offsets."""
    return len(text.encode("utf-16-le")) // 2


class UnsupportedParseMode(ValueError):
    """parse_mode is none of HTML, Markdown, MarkdownV2."""


def format_text(text: str, parse_mode: str | None) -> FormattedText:
    """Apply parse_mode, then trim surrounding whitespace the way Telegram does.

    Only HTML is checked strictly; Markdown modes pass through unparsed (Lancelot sends HTML).
    """
    mode = (parse_mode or "").lower()
    if mode == "html":
        parsed = parse_html(text)
    elif mode in ("", "markdown", "markdownv2"):
        parsed = FormattedText(text)
    else:
        raise UnsupportedParseMode(parse_mode)
    return _strip(parsed)


def _strip(parsed: FormattedText) -> FormattedText:
    stripped = parsed.text.strip()
    lead = utf16_len(parsed.text[: len(parsed.text) - len(parsed.text.lstrip())])
    size = utf16_len(stripped)
    entities = []
    for entity in parsed.entities:
        start = max(entity["offset"] - lead, 0)
        end = min(entity["offset"] + entity["length"] - lead, size)
        if end > start:
            entities.append({**entity, "offset": start, "length": end - start})
    return FormattedText(stripped, tuple(entities))


def parse_html(markup: str) -> FormattedText:
    """Parse Telegram HTML into text and entities, or raise EntityParseError."""
    return _HtmlParser(markup.encode("utf-8")).run()


@dataclass
class _OpenTag:
    name: str
    argument: str
    utf16_offset: int
    result_pos: int


class _HtmlParser:
    """A byte-level port of tdlib's parser; `at()` stands in for C's NUL terminator."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.i = 0
        self.result = bytearray()
        self.utf16_offset = 0
        self.open_tags: list[_OpenTag] = []
        self.entities: list[dict[str, Any]] = []

    def at(self, pos: int) -> int:
        return self.data[pos] if pos < len(self.data) else 0

    def run(self) -> FormattedText:
        while self.i < len(self.data):
            c = self.data[self.i]
            if c == ord("&") and self._append_html_entity():
                continue
            if c != ord("<"):
                self._plain_run()
                continue
            if self.at(self.i + 1) == ord("/"):
                self._end_tag()
            else:
                self._start_tag()
        if self.open_tags:
            name = self.open_tags[-1].name
            raise EntityParseError(f'Can\'t find end tag corresponding to start tag "{name}"')
        try:
            text = self.result.decode("utf-8")
        except UnicodeDecodeError:
            raise EntityParseError(
                "Text contains invalid Unicode characters after decoding HTML entities, "
                "check for unmatched surrogate code units"
            ) from None
        for entity in self.entities:
            if entity["type"] == "code":
                entity.pop("language", None)  # a language only counts inside <pre>
        order = sorted(self.entities, key=lambda e: (e["offset"], -e["length"]))
        return FormattedText(text, tuple(order))

    def _plain_run(self) -> None:
        """Copy the text up to the next '&' or '<' (or the end) as it is, at once: what the
        byte loop of tdlib does, without a Python step per byte."""
        ends = [
            i for i in (self.data.find(b"&", self.i + 1), self.data.find(b"<", self.i)) if i >= 0
        ]
        end = min(ends, default=len(self.data))
        chunk = self.data[self.i : end]
        try:
            self.utf16_offset += len(chunk.decode("utf-8").encode("utf-16-le")) // 2
        except UnicodeDecodeError:  # counted as tdlib does; the final decode refuses it
            self.utf16_offset += sum((2 if c >= 0xF0 else 1) for c in chunk if c & 0xC0 != 0x80)
        self.result += chunk
        self.i = end

    def _append_html_entity(self) -> bool:
        code, end = _decode_html_entity(self.data, self.i)
        if not code:
            return False
        self.result += chr(code).encode("utf-8", "surrogatepass")
        self.utf16_offset += 2 if code > 0xFFFF else 1
        self.i = end
        return True

    def _start_tag(self) -> None:
        begin = self.i
        self.i += 1
        while self.at(self.i) not in _SPACES and self.at(self.i) != ord(">"):
            self.i += 1
        if self.at(self.i) == 0:
            raise EntityParseError(f"Unclosed start tag at byte offset {begin}")
        name = self.data[begin + 1 : self.i].decode("utf-8", "replace").lower()
        if name not in SUPPORTED_TAGS:
            raise EntityParseError(f'Unsupported start tag "{name}" at byte offset {begin}')
        argument = self._attributes(name, begin)
        if name == "span" and argument != "spoiler":
            raise EntityParseError(
                f'Tag "span" must have class "tg-spoiler" at byte offset {begin}'
            )
        self.i += 1  # past '>'
        self.open_tags.append(_OpenTag(name, argument, self.utf16_offset, len(self.result)))

    def _attributes(self, tag: str, begin: int) -> str:
        argument = ""
        while self.at(self.i) != ord(">"):
            while self.at(self.i) != 0 and self.at(self.i) in _SPACES:
                self.i += 1
            if self.at(self.i) == ord(">"):
                break
            name_begin = self.i
            while self.at(self.i) not in _SPACES and self.at(self.i) not in b"=>":
                self.i += 1
            name = self.data[name_begin : self.i].decode("utf-8", "replace")
            if not name:
                raise EntityParseError(
                    f'Empty attribute name in the tag "{tag}" at byte offset {begin}'
                )
            while self.at(self.i) != 0 and self.at(self.i) in _SPACES:
                self.i += 1
            if self.at(self.i) != ord("="):
                if tag == "blockquote" and name == "expandable":
                    argument = "expandable"
                    continue
                raise EntityParseError(
                    "Expected equal sign in declaration of an attribute of the tag "
                    f'"{tag}" at byte offset {begin}'
                )
            value = self._attribute_value(tag, begin)
            argument = _tag_argument(tag, name, value, argument)
        return argument

    def _attribute_value(self, tag: str, begin: int) -> str:
        self.i += 1  # past '='
        while self.at(self.i) != 0 and self.at(self.i) in _SPACES:
            self.i += 1
        if self.at(self.i) == 0:
            raise EntityParseError(f'Unclosed start tag "{tag}" at byte offset {begin}')
        quote = self.at(self.i)
        if quote not in b"'\"":
            token_begin = self.i
            while chr(self.at(self.i)).isascii() and (
                chr(self.at(self.i)).isalnum() or self.at(self.i) in b".-"
            ):
                self.i += 1
            if self.at(self.i) not in _SPACES and self.at(self.i) != ord(">"):
                raise EntityParseError(f"Unexpected end of name token at byte offset {token_begin}")
            return self.data[token_begin : self.i].decode("utf-8").lower()
        self.i += 1
        value = bytearray()
        while self.at(self.i) not in (quote, 0):
            code, end = _decode_html_entity(self.data, self.i) if self.at(self.i) == 38 else (0, 0)
            if code:
                value += chr(code).encode("utf-8", "surrogatepass")
                self.i = end
                continue
            value.append(self.data[self.i])
            self.i += 1
        if self.at(self.i) == quote:
            self.i += 1
        if self.at(self.i) == 0:
            raise EntityParseError(f"Unclosed start tag at byte offset {begin}")
        return value.decode("utf-8", "replace")

    def _end_tag(self) -> None:
        begin = self.i
        if not self.open_tags:
            raise EntityParseError(f"Unexpected end tag at byte offset {begin}")
        self.i += 2
        while self.at(self.i) not in _SPACES and self.at(self.i) != ord(">"):
            self.i += 1
        end_name = self.data[begin + 2 : self.i].decode("utf-8", "replace").lower()
        while self.at(self.i) != 0 and self.at(self.i) in _SPACES:
            self.i += 1
        if self.at(self.i) != ord(">"):
            raise EntityParseError(f"Unclosed end tag at byte offset {begin}")
        self.i += 1
        tag = self.open_tags.pop()
        if end_name and end_name != tag.name:
            raise EntityParseError(
                f"Unmatched end tag at byte offset {begin}, "
                f'expected "</{tag.name}>", found "</{end_name}>"'
            )
        if self.utf16_offset > tag.utf16_offset:
            self._add_entity(tag)

    def _add_entity(self, tag: _OpenTag) -> None:
        entity: dict[str, Any] = {
            "type": _ENTITY_TYPES.get(tag.name, tag.name),
            "offset": tag.utf16_offset,
            "length": self.utf16_offset - tag.utf16_offset,
        }
        if tag.name == "a":
            url = tag.argument or self.result[tag.result_pos :].decode("utf-8", "replace")
            entity.update(type="text_link", url=url)
        elif tag.name == "tg-emoji":
            if not tag.argument.isdigit() or int(tag.argument) == 0:
                raise EntityParseError("Invalid custom emoji identifier specified")
            entity.update(type="custom_emoji", custom_emoji_id=tag.argument)
        elif tag.name == "blockquote" and tag.argument:
            entity["type"] = "expandable_blockquote"
        elif tag.name in ("pre", "code") and self._merge_pre_code(tag, entity):
            return
        self.entities.append(entity)

    def _merge_pre_code(self, tag: _OpenTag, entity: dict[str, Any]) -> bool:
        """`<pre><code class="language-x">` is one pre entity with a language."""
        last = self.entities[-1] if self.entities else None
        same_span = last is not None and (last["offset"], last["length"]) == (
            entity["offset"],
            entity["length"],
        )
        if tag.name == "pre" and same_span and last and last.get("language"):
            last["type"] = "pre"
            return True
        if tag.name == "code" and same_span and last and last["type"] == "pre" and tag.argument:
            last["language"] = tag.argument
            return True
        if tag.name == "code" and tag.argument:
            entity["language"] = tag.argument  # dropped in run() unless a pre claims it
        return False


def _tag_argument(tag: str, attribute: str, value: str, current: str) -> str:
    if tag == "a" and attribute == "href":
        return value
    if tag == "code" and attribute == "class" and value.startswith("language-"):
        return value.removeprefix("language-")
    if tag == "span" and attribute == "class" and value.startswith("tg-"):
        return value.removeprefix("tg-")
    if tag == "tg-emoji" and attribute == "emoji-id":
        return value
    return current


def _decode_html_entity(data: bytes, pos: int) -> tuple[int, int]:
    """Decode `&...;` at pos: (code point, end position), or (0, pos) if it stays literal text."""

    def at(p: int) -> int:
        return data[p] if p < len(data) else 0

    end = pos + 1
    code = 0
    if at(pos + 1) == ord("#"):
        end += 1
        digits, base = ("0123456789abcdefABCDEF", 16) if at(pos + 2) == ord("x") else ("", 10)
        if base == 16:
            end += 1
        else:
            digits = "0123456789"
        while at(end) and chr(at(end)) in digits:
            code = code * base + int(chr(at(end)), base)
            end += 1
        if code == 0 or code >= 0x10FFFF or end - pos >= 10:
            return 0, pos
    else:
        while chr(at(end)).isascii() and chr(at(end)).isalpha():
            end += 1
        code = _NAMED_ENTITIES.get(data[pos + 1 : end], 0)
        if not code:
            return 0, pos
    if at(end) == ord(";"):
        end += 1
    return code, end
