"""What-if: the recorded decisions of a period decided again under a proposed Soul, and what
would have changed for the owner (asked more, asked less, refused).

The decision is a pure function of its recorded inputs (core/governance/deciding.py), and
its costly part, the Soul's ruling on the action's facts, reads only those facts: each is
ruled on once. A history repeats itself (the same commands, the same tools), which keeps
100,000 decisions within seconds (benchmarks/whatif.py).
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from core.governance.deciding import RuleKey, Ruling, rule, rule_key, settle
from core.governance.decision import Decision, Verdict
from core.governance.replay import NotReplayable, RecordedDecision, read_decision
from core.receipts.history import stored_of_kind
from core.receipts.model import StoredReceipt
from core.receipts.registry import GovernanceReceipt
from soul import Soul

EXAMPLES = 5  # changes kept of each sort, to show


@dataclass(frozen=True, slots=True)
class Change:
    """One recorded decision the proposed Soul would decide otherwise."""

    decision: RecordedDecision
    now: Decision

    def describe(self) -> str:
        """ "rm -rf old (T3 needs_approval, now T1 allow)"."""
        was = self.decision.recorded
        return (
            f"{self.decision.command or self.decision.receipt_id} ({was.get('tier')} "
            f"{was.get('verdict')}, now {self.now.tier} {self.now.verdict})"
        )


@dataclass(frozen=True, slots=True)
class Tally:
    """How many decisions changed one way, and the first few of them."""

    count: int = 0
    examples: tuple[Change, ...] = ()

    def plus(self, change: Change) -> Tally:
        """This tally with one more change."""
        kept = self.examples if len(self.examples) >= EXAMPLES else (*self.examples, change)
        return Tally(self.count + 1, kept)


@dataclass(frozen=True, slots=True)
class WhatIf:
    """What a proposed Soul would have changed over `days` of recorded decisions."""

    days: int
    decisions: int  # decided again
    not_replayable: int  # recorded before decisions kept their inputs, or damaged
    would_ask: Tally  # ran without asking; would now ask
    would_run: Tally  # asked; would now run without asking
    would_refuse: Tally  # was not refused; would now be

    def sorts(self) -> tuple[tuple[str, Tally], ...]:
        """Each way a decision would go otherwise, in words, with its tally (what the CLI
        and the receipt page list)."""
        return (
            ("would now ask", self.would_ask),
            ("would now run without asking", self.would_run),
            ("would now be refused", self.would_refuse),
        )

    def sentence(self) -> str:
        """The effect in one sentence, for the amendment's card."""
        period = f"Over the last {self.days} days"
        if not self.decisions:
            return f"{period} no decision was recorded that this could change."
        parts = []
        if self.would_ask.count:
            parts.append(f"asked you {_more_times(self.would_ask.count)}")
        if self.would_run.count:
            parts.append(f"let {_commands(self.would_run.count)} run that asked")
        if self.would_refuse.count:
            refused = self.would_refuse.count
            # Refused now: each was allowed before, or asked about (the owner may have said yes).
            parts.append(
                f"refused {_commands(refused)} that {_was(refused)} allowed or asked about"
            )
        if not parts and self.decisions == 1:
            return f"{period} this would not have changed the one decision recorded."
        if not parts:
            return f"{period} this would have changed none of {self.decisions:,} decisions."
        joined = parts[0] if len(parts) == 1 else f"{', '.join(parts[:-1])} and {parts[-1]}"
        return f"{period} this would have {joined}."


def what_if(receipts: Iterable[StoredReceipt], proposed: Soul, days: int) -> WhatIf:
    """Decide every recorded decision in `receipts` again under `proposed`; what changes."""
    rulings: dict[RuleKey, Ruling] = {}
    decided = skipped = 0
    tallies = {Verdict.NEEDS_APPROVAL: Tally(), Verdict.ALLOW: Tally(), Verdict.DENY: Tally()}
    for receipt in receipts:
        found = read_decision(receipt)
        if isinstance(found, NotReplayable):
            skipped += 1
            continue
        decided += 1
        key = rule_key(found.inputs)
        ruling = rulings.get(key)
        if ruling is None:
            ruling = rulings[key] = rule(proposed, found.inputs)
        now = settle(proposed, found.inputs, ruling)
        sort = _sort_of(str(found.recorded.get("verdict")), now.verdict)
        if sort is not None:
            tallies[sort] = tallies[sort].plus(Change(found, now))
    return WhatIf(
        days,
        decided,
        skipped,
        would_ask=tallies[Verdict.NEEDS_APPROVAL],
        would_run=tallies[Verdict.ALLOW],
        would_refuse=tallies[Verdict.DENY],
    )


def what_if_recorded(path: Path, proposed: Soul, days: int, now: float | None = None) -> WhatIf:
    """`what_if` over the decisions the ledger at `path` recorded in the last `days` days
    (before `now`, by default the time). Reads the file only; raises sqlite3.Error."""
    moment = time.time() if now is None else now
    since = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(moment - days * 86400))
    kind = str(GovernanceReceipt.POLICY_DECISION)
    return what_if(stored_of_kind(path, kind, since=since), proposed, days)


def _sort_of(was: str, now: Verdict) -> Verdict | None:
    """Which change a verdict going from `was` to `now` is (None: none the owner notices)."""
    if now is Verdict.DENY and was != Verdict.DENY:
        return Verdict.DENY
    if now is Verdict.NEEDS_APPROVAL and was == Verdict.ALLOW:
        return Verdict.NEEDS_APPROVAL
    if now is Verdict.ALLOW and was == Verdict.NEEDS_APPROVAL:
        return Verdict.ALLOW
    return None


def _more_times(count: int) -> str:
    return "once more" if count == 1 else f"{count:,} more times"


def _was(count: int) -> str:
    return "was" if count == 1 else "were"


def _commands(count: int) -> str:
    return "1 command" if count == 1 else f"{count:,} commands"
