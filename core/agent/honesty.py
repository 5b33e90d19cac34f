"""Honesty gate: an answer never claims an action that has no successful receipt."""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from core.agent.answer import ActionClaim, FinalAnswer
from core.governance.by_effect import APPLY
from core.governance.commands import SHELL
from core.receipts.base import ReceiptStore
from core.receipts.model import ReceiptStatus

# A capability -> the parameters naming what its runs act on (its tool's flow says which).
Targets = Callable[[str], tuple[str, ...]]

# "I deleted", "I've created", "I have moved", "Done: removed ..." in the prose of a reply.
_CLAIMED = re.compile(
    r"\b(I(?:'ve| have)?|we(?:'ve| have)?|done[:,]?)\s+(?:now\s+|already\s+|successfully\s+)?"
    r"(deleted|removed|created|wrote|written|moved|renamed|copied|ran|executed|installed|"
    r"updated|saved|cleaned|pushed|deployed|sent|fixed|changed)\b",
    re.IGNORECASE,
)
_DELETE = frozenset({"rm", "rmdir", "unlink", "shred", "file.delete"})
_WRITE = frozenset({"touch", "mkdir", "cp", "tee", "sed", "file.write"})
# The commands (first word) or capabilities that back a claimed verb; a verb not listed
# here ("ran", "updated", "fixed") is backed by any successful run.
_EVIDENCE: dict[str, frozenset[str]] = {
    "deleted": _DELETE,
    "removed": _DELETE,
    "created": _WRITE,
    "wrote": _WRITE,
    "written": _WRITE,
    "saved": _WRITE,
    "moved": frozenset({"mv", "file.move"}),
    "renamed": frozenset({"mv", "file.move"}),
    "copied": frozenset({"cp", "file.write"}),
    "installed": frozenset({"pip", "pip3", "npm", "uv", "poetry", "apt", "apt-get", "cargo"}),
    "pushed": frozenset({"git", "repo.push"}),
}


@dataclass(frozen=True, slots=True)
class ToolRun:
    """A tool run as its receipt records it."""

    receipt_id: str
    tool: str
    command: str
    succeeded: bool


@dataclass(frozen=True, slots=True)
class Checked:
    """The answer after the gate, and what had to be corrected."""

    answer: FinalAnswer
    verified: tuple[ToolRun, ...]
    corrections: tuple[str, ...]


async def runs_on_record(
    ledger: ReceiptStore, receipt_ids: list[str], targets: Targets
) -> list[ToolRun]:
    """What ran, read back from the ledger itself: tool_run receipts (an applied dry run
    counts as the shell command it was), and dry runs that changed nothing, which is all
    such a command does. `targets` says which parameters of a run name what it acted on."""
    if not receipt_ids:
        return []  # nothing ran: no need to wait for the ledger's pending batch to land
    await ledger.flush()
    runs = []
    for rid in receipt_ids:
        stored = await ledger.get(rid)
        if stored is None:
            continue
        inputs = stored.decoded("inputs")
        if not isinstance(inputs, dict):
            continue
        tool = SHELL if stored.action_name == APPLY else stored.action_name
        succeeded = stored.status == ReceiptStatus.SUCCESS
        if stored.action_type == "dry_run":
            outputs, meta = stored.decoded("outputs"), stored.decoded("metadata")
            if not isinstance(outputs, dict) or not isinstance(meta, dict) or meta.get("kept"):
                continue  # its changes wait for the owner, or were dropped: not done
            succeeded = succeeded and outputs.get("exit_code") == 0
        elif stored.action_type != "tool_run":
            continue
        runs.append(ToolRun(stored.id, tool, _shown(tool, inputs, targets(tool)), succeeded))
    return runs


def _shown(capability: str, inputs: dict[str, Any], named: tuple[str, ...]) -> str:
    """A run as the owner reads it: the command line, or the capability and what it acted
    on, by the parameters `named` ("file.delete /workspace/old.log"), never a file's whole
    content."""
    params = inputs.get("params")
    if capability == SHELL or not isinstance(params, dict):
        return str(inputs.get("command", ""))
    paths = [str(params[k]) for k in named if isinstance(params.get(k), str)]
    return " ".join([capability, *paths])


def _words(text: str) -> tuple[str, ...]:
    """Command words, with workspace paths named one way (/workspace/a == ./a == a)."""
    try:
        words = shlex.split(text)
    except ValueError:
        words = text.split()
    return tuple(w.removeprefix("/workspace/").removeprefix("./") or "." for w in words)


def _within(part: tuple[str, ...], whole: tuple[str, ...]) -> bool:
    """Whether `part` occurs in `whole` as a run of whole words."""
    size = len(part)
    return any(whole[i : i + size] == part for i in range(len(whole) - size + 1))


def _backs(run: ToolRun, claim: ActionClaim, tools: dict[str, str]) -> bool:
    """Whether a successful run is the action the claim describes."""
    if not run.succeeded or tools.get(claim.tool, claim.tool) != run.tool:
        return False
    claimed = _words(claim.detail)
    return bool(claimed) and _within(claimed, _words(run.command))


def check_answer(answer: FinalAnswer, runs: list[ToolRun], tools: dict[str, str]) -> Checked:
    """Keep only claims a successful receipt backs; say plainly what was removed.

    `tools` maps a tool name the model sees (run_command) to the capability its receipts
    carry (shell.exec).
    """
    kept: list[ActionClaim] = []
    verified: list[ToolRun] = []
    corrections: list[str] = []
    for claim in answer.actions_taken:
        run = next((r for r in runs if _backs(r, claim, tools)), None)
        if run is None:
            corrections.append(f"I listed '{claim.detail}' as done, but no receipt shows it ran.")
            continue
        kept.append(claim)
        verified.append(run)
    corrections.extend(_prose_claims(answer.response_to_user, runs))
    checked = answer.model_copy(update={"actions_taken": kept})
    return Checked(checked, tuple(verified), tuple(corrections))


def _prose_claims(text: str, runs: list[ToolRun]) -> list[str]:
    """Corrections for actions the reply's prose claims but no successful receipt backs."""
    done = [r for r in runs if r.succeeded]
    if not done and _CLAIMED.search(text):
        return ["No action ran for this request, so nothing was changed."]
    kinds = {w for r in done for w in (r.tool, *_words(r.command)[:1])}
    unbacked = []
    for match in _CLAIMED.finditer(text):
        verb = match.group(2).lower()
        needed = _EVIDENCE.get(verb)
        if needed is not None and not needed & kinds and verb not in unbacked:
            unbacked.append(verb)
    return [
        f"I said I {verb} something, but no receipt shows that; it was not done."
        for verb in unbacked
    ]
