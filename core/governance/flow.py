"""Information flow: what a request has read decides what it may send out and change.

A model can be fooled by any text it reads, so each call is judged with the request's labels
(CaMeL and FIDES, 2025): the owner's words choose the actions; private data (workspace files,
memory, command output over them) may not leave the machine unless the owner's own words named
the address or query; strangers' text (pages, search results, files that came from outside)
may fill in data but never choose a change the owner did not name. A value read from a
stranger stays a stranger's value: decisions read labels, they never guess from wording.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from urllib.parse import urlsplit

from core.tools.action import ToolAction
from core.tools.definition import ANY_TARGET, Label, ToolFlow

ASK_MARK = "Because of what this request read: "  # an approval card shows such a reason
_WORD = re.compile(r"\w+")
_WORKSPACE = "/workspace/"
INBOX = "inbox/"  # files that came from outside: the owner forwarded them, others wrote them


@dataclass
class RequestFlow:
    """What one request has read so far, and from where."""

    owner_text: str  # what the owner typed (and Lancelot's note of the files sent with it)
    labels: set[Label] = field(default_factory=lambda: {Label.OWNER})
    private_from: list[str] = field(default_factory=list)  # "notes/private.txt", "memory"
    strangers: list[str] = field(default_factory=list)  # "the page example.org/article"
    stranger_text: list[str] = field(default_factory=list)  # what strangers wrote, verbatim
    _owner_words: frozenset[str] = frozenset()

    def __post_init__(self) -> None:
        self._owner_words = _lowered(self.owner_text)

    @property
    def holds_private(self) -> bool:
        """Private data has entered the model's context."""
        return Label.PRIVATE in self.labels

    @property
    def read_strangers(self) -> bool:
        """Strangers' text has entered the model's context."""
        return Label.STRANGER in self.labels

    def knows_private(self, source: str) -> None:
        """Private data from `source` is in the context (memory compiled into the prompt)."""
        self.labels.add(Label.PRIVATE)
        if source not in self.private_from:
            self.private_from.append(source)

    def heard_stranger(self, source: str, text: str, quotable: bool = True) -> None:
        """A stranger's `text` (from `source`) is in the context. Only `quotable` text (a
        page, a search result: nothing private) lends its links to `quoted_from_stranger`."""
        self.labels.add(Label.STRANGER)
        if source not in self.strangers:
            self.strangers.append(source)
        if quotable:
            self.stranger_text.append(text)

    def observe(self, action: ToolAction, spec: ToolFlow, output: str) -> None:
        """`action` (of flow `spec`) ran and the model will see `output`: the request now
        holds the labels its output carries."""
        labels = spec.reads
        if Label.PRIVATE in labels:
            self.knows_private(_source(action))
        if Label.STRANGER in labels:  # a workspace file's words are private all the same
            self.heard_stranger(_source(action), output, quotable=Label.PRIVATE not in labels)

    def owner_named(self, value: str) -> bool:
        """Whether the owner's typed message names `value` (a path, an address, a query)
        as a whole word or path, or holds every word of it."""
        value = value.strip()
        if not value:
            return False
        relative = _relative(value)
        named = (value, relative, PurePosixPath(relative).name)  # "" has the name ""
        if any(_mentions(self.owner_text, name) for name in named if _distinct(name)):
            return True
        words = _lowered(value)
        return bool(words) and words <= self._owner_words  # a query in the owner's words

    def quoted_from_stranger(self, value: str) -> bool:
        """Whether `value` stands whole in what a stranger wrote (a link on the page): it
        can carry nothing the request read elsewhere."""
        return any(value in text for text in self.stranger_text)

    def source_text(self) -> str:
        """Who asked, in plain words: "the page 127.0.0.1/attack"."""
        return ", ".join(self.strangers) if self.strangers else "text the model read"


def ask_to_send(action: ToolAction, spec: ToolFlow, flow: RequestFlow) -> str | None:
    """Why sending `action`'s outbound values (its flow `spec` names them) needs the owner
    (None: they may go)."""
    if not flow.holds_private:
        return None
    for name in spec.sends:
        value = str(action.params.get(name, ""))
        if flow.owner_named(value) or flow.quoted_from_stranger(value):
            continue
        return (
            f"{ASK_MARK}it would send {len(value)} characters to {_recipient(action, value)} "
            f"({_shown(value)}) while this request holds private data from "
            f"{', '.join(flow.private_from)}; the address or query did not come from your "
            f"message. Asked for by {flow.source_text() if flow.read_strangers else 'the model'}."
        )
    return None


def ask_to_change(action: ToolAction, spec: ToolFlow, flow: RequestFlow) -> str | None:
    """Why changing what `action` names (its flow `spec` says which parameters) needs the
    owner (None: the owner named it, or no stranger's text is in the request)."""
    targets = [str(action.params.get(n, "")) for n in spec.changes if n != ANY_TARGET]
    inside_git = [t for t in targets if _in_git_dir(t)]
    if inside_git:  # a repository's own files can point git anywhere on the host
        return (
            f"{ASK_MARK}it changes {_shown(inside_git[0])}, inside a repository's .git folder: "
            "git reads those files to decide which repository, hooks and settings it uses."
        )
    if not flow.read_strangers or not spec.changes:
        return None
    if targets and all(flow.owner_named(t) for t in targets) and ANY_TARGET not in spec.changes:
        return None
    what = ", ".join(t for t in targets if t) or action.describe()
    return (
        f"{ASK_MARK}it changes {_shown(what)}, which your message did not name, after "
        f"reading {flow.source_text()}. Asked for by {flow.source_text()}."
    )


def ask_if_it_changes(flow: RequestFlow, command: str) -> str | None:
    """For a command whose changes only a dry run shows: the reason to ask if it changes
    anything (None: no stranger's text is in the request, or the owner's message names
    every operand of the command)."""
    if not flow.read_strangers:
        return None
    operands = [w for w in command_words(command)[1:] if not w.startswith("-")]
    if operands and all(flow.owner_named(w) for w in operands):
        return None
    return (
        f"{ASK_MARK}this command changes your workspace after reading {flow.source_text()}, "
        f"and your message did not ask for it. Asked for by {flow.source_text()}."
    )


def _distinct(name: str) -> bool:
    """A name the owner's words can be taken to mean: with an extension or a folder, or of
    three letters at least (a file called `a` is not named by "save a summary")."""
    return "." in name or "/" in name or len(name) >= 3


def _mentions(text: str, name: str) -> bool:
    """Whether `name` stands in `text` as a whole word or path (`a` is not in `data`)."""
    pattern = rf"(?<![\w./-]){re.escape(name)}(?![\w/-])"
    return re.search(pattern, text) is not None


def _lowered(text: str) -> frozenset[str]:
    return frozenset(w.lower() for w in _WORD.findall(text))


def command_words(command: str) -> list[str]:
    """A command line's words (shell quoting undone; unsplittable: split on spaces)."""
    try:
        return shlex.split(command)
    except ValueError:
        return command.split()


def _in_git_dir(path: str) -> bool:
    """Whether `path` is inside a repository's .git folder (or is one)."""
    return ".git" in PurePosixPath(_relative(path)).parts


def _relative(path: str) -> str:
    """A workspace path as the owner would write it: notes/a.txt."""
    path = path.strip()
    if path.startswith(_WORKSPACE):
        return path[len(_WORKSPACE) :]
    return path.lstrip("/")


def _source(action: ToolAction) -> str:
    """Where an action's output came from, in the owner's words."""
    params = action.params
    if action.capability == "web.fetch":
        parts = urlsplit(str(params.get("url", "")))
        return f"the page {parts.netloc}{parts.path}"
    if action.capability == "web.search":
        return f"the search results for “{_shown(str(params.get('query', '')), 60)}”"
    if action.capability.startswith("memory."):
        return "memory"
    if "path" in params and action.capability.startswith(("file.", "repo.")):
        where = _relative(str(params["path"])) or "the workspace"
        if where.startswith(INBOX):
            return f"the document {where} that came with a message"
        return f"the file {where}"
    if action.command is not None:
        return f"the output of `{_shown(action.command, 60)}`"
    return action.capability


def _recipient(action: ToolAction, value: str) -> str:
    if action.capability == "web.fetch":
        return urlsplit(value).netloc or "another server"
    if action.capability == "web.search":
        return "the search provider"
    return "another server"


def _shown(value: str, limit: int = 120) -> str:
    return value if len(value) <= limit else value[: limit - 1] + "…"
