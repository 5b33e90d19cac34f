"""A web page as a reader sees it: the title and the main text, without scripts, menus,
forms or anything hidden from view (hidden text is where injected orders like to sit).

Parsed by selectolax (the Lexbor HTML5 parser, in C); the walk below only decides what a
reader would see and where lines break. Blocking: call it in a thread.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING
from urllib.parse import urldefrag, urljoin, urlsplit

if TYPE_CHECKING:
    from selectolax.lexbor import LexborNode

# Never text a reader sees: code, styling, embedded objects, navigation and form controls.
# fmt: off
SKIPPED = frozenset({
    "script", "style", "noscript", "template", "svg", "math", "canvas", "iframe", "object",
    "embed", "head", "nav", "footer", "aside", "form", "button", "select", "option", "input",
    "textarea", "dialog",
})
# Elements that start a new line (a heading or a list item also gets a mark).
BLOCKS = frozenset({
    "address", "article", "blockquote", "dd", "details", "div", "dl", "dt", "figcaption",
    "figure", "header", "hr", "main", "ol", "p", "pre", "section", "summary", "table", "tbody",
    "thead", "tr", "ul",
})
# fmt: on
MARKS = {"li": "\n- ", "h1": "\n# ", "h2": "\n## ", "h3": "\n### ", "td": " ", "th": " "}
MARKS.update({f"h{n}": "\n#### " for n in (4, 5, 6)})
ENDS = {"li": "", "td": " ", "th": " "}  # what closes an element (default: a line break)
# Lexbor's tree builder slows down with the square of the open elements' depth (40,000
# unclosed divs: seconds); real pages stay far below this, a hostile one is refused.
MAX_DEPTH = 1500
# Tags whose end the parser implies (or that have none): they do not deepen the tree.
_SHALLOW = frozenset(
    b"p li dt dd tr td th option optgroup rb rt rp thead tbody tfoot colgroup caption area "
    b"base br col embed hr img input link meta source track wbr".split()
)
_TAG = re.compile(rb"<(/?)([A-Za-z][A-Za-z0-9-]{0,30})")
_HIDING = re.compile(r"display\s*:\s*none|visibility\s*:\s*hidden", re.IGNORECASE)
_SPACES = re.compile(r"[ \t\r\f\v\u00a0]+")
_GAPS = re.compile(r"\n{3,}")
_SLACK = 3  # raw characters gathered per character kept (whitespace collapses)
MAX_LINKS = 20


class TooDeep(ValueError):
    """The page nests elements deeper than any real page does."""


@dataclass(frozen=True, slots=True)
class Page:
    """What a page says: its title (may be empty), its readable text (at most the asked
    length) and whether it had more."""

    title: str
    text: str
    cut: bool = False
    links: tuple[str, ...] = ()  # where its visible links lead, as full addresses


def nesting_depth(html: bytes) -> int:
    """The deepest run of open elements a tag-by-tag count finds (an upper bound of what
    the parser builds, ignoring the elements whose end is implied)."""
    depth = deepest = 0
    # finditer, not findall: one C call over megabytes would hold the GIL (and so the event
    # loop) for a fifth of a second.
    for match in _TAG.finditer(html):
        closing, name = match.groups()
        if name.lower() in _SHALLOW:
            continue
        if closing:
            depth = max(depth - 1, 0)
        else:
            depth += 1
            deepest = max(deepest, depth)
    return deepest


def _hidden(node: LexborNode) -> bool:
    """Whether the page hides this element from its reader."""
    attrs = node.attributes
    if not attrs:
        return False
    if "hidden" in attrs or (attrs.get("aria-hidden") or "").lower() == "true":
        return True
    return bool(_HIDING.search(attrs.get("style") or ""))


def _pieces(root: LexborNode, budget: int) -> tuple[list[str], bool]:
    """The text of `root`, depth first, with line breaks where blocks start and end, until
    `budget` characters are gathered (then True: there was more). Line breaks in the source
    are spaces, except in `<pre>`.

    It walks node to node (first child, next sibling) with an explicit stack, so a deep page
    does not exhaust Python's recursion and a wide one is never listed whole: the walk stops
    at the budget, and the event loop is never held up by one long call in C."""
    parts: list[str] = []
    size = pre = 0
    stack: list[LexborNode | str | int] = [root]
    while stack:
        item = stack.pop()
        if isinstance(item, int):  # leaving a <pre>
            pre += item
            continue
        if isinstance(item, str):
            parts.append(item)
            continue
        if item is not root and item.next is not None:
            stack.append(item.next)  # after this node and everything in it
        if item.is_text_node:
            text = item.text_content or ""
            parts.append(text if pre else text.replace("\n", " "))
            size += len(text)
            if size > budget:
                return parts, True
            continue
        tag = item.tag or ""
        if not item.is_element_node or tag in SKIPPED or _hidden(item):
            continue
        if tag == "br":
            parts.append("\n")
            continue
        if tag in MARKS or tag in BLOCKS:
            parts.append(MARKS.get(tag, "\n"))
            stack.append(ENDS.get(tag, "\n"))
        if tag == "pre":
            pre += 1
            stack.append(-1)
        if item.child is not None:
            stack.append(item.child)
    return parts, False


def tidy(text: str) -> str:
    """One space between words, no run of blank lines."""
    lines = (_SPACES.sub(" ", line).strip() for line in text.split("\n"))
    return _GAPS.sub("\n\n", "\n".join(lines)).strip()


def clip(text: str, limit: int) -> tuple[str, bool]:
    """At most `limit` characters, cut after a whole word when one ends near the limit."""
    if len(text) <= limit:
        return text, False
    head = text[:limit]
    space = max(head.rfind(" "), head.rfind("\n"))
    return (head[:space] if space > limit * 0.8 else head).rstrip(), True


def links(root: LexborNode, base: str, most: int = MAX_LINKS) -> tuple[str, ...]:
    """The http(s) addresses of `root`'s visible links, made whole against `base` (the
    page's address), each once, at most `most`: the model follows a link by the address the
    page gave, not one it puts together itself (which could carry anything it has read)."""
    found: dict[str, None] = {}
    for anchor in root.css("a[href]"):
        if len(found) >= most:
            break
        if any(_hidden(n) or (n.tag or "") in SKIPPED for n in _lineage(anchor, root)):
            continue
        href = (anchor.attributes.get("href") or "").strip()
        address = urljoin(base, href) if base else href
        if urlsplit(address).scheme in ("http", "https"):
            found[urldefrag(address).url] = None
    return tuple(found)


def _lineage(node: LexborNode, root: LexborNode) -> list[LexborNode]:
    """`node` and its ancestors up to `root`."""
    chain = []
    current: LexborNode | None = node
    while current is not None and current is not root:
        chain.append(current)
        current = current.parent
    return chain


def readable(html: bytes, encoding: str, limit: int, base: str = "") -> Page:
    """The page's title and readable text (its `<main>` when it marks one, else its body),
    at most `limit` characters, and its links (made whole against `base`). TooDeep for a
    page no reader could get through."""
    depth = nesting_depth(html)
    if depth > MAX_DEPTH:
        raise TooDeep(f"the page nests elements {depth:,} deep")
    from selectolax.lexbor import LexborHTMLParser  # the parser loads with the first page

    tree = LexborHTMLParser(html.decode(encoding, "replace"))
    title_node = tree.head.css_first("title") if tree.head is not None else None
    title = tidy(title_node.text()) if title_node is not None else ""
    root = tree.css_first("main") or tree.body or tree.root
    if root is None:
        return Page(title, "")
    parts, more = _pieces(root, limit * _SLACK)
    text, cut = clip(tidy("".join(parts)), limit)
    return Page(title, text, cut or more, links(root, base))
