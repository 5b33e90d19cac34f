"""Replay: a request's policy decisions decided again from the inputs their receipts recorded.

No model is called and no tool runs: each policy_decision receipt holds what its decision
read (core/governance/decision.py), so `decide` is run on those inputs under a Soul (the
one that decided, found by version and digest, or another given on purpose) and the result
is compared with what was recorded. A receipt written before decisions kept their inputs
is "not replayable", never an error.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from core.governance.deciding import decide
from core.governance.decision import (
    INPUTS_KEY,
    DecisionInputs,
    InputsError,
    soul_digest,
)
from core.receipts.model import StoredReceipt
from soul import Soul, SoulError, SoulStore

COMPARED = ("verdict", "tier", "rules", "kinds", "reason", "auto_approved")


class SoulUnavailable(LookupError):
    """The Soul a decision was made under cannot be had (gone, or changed since)."""


# The Soul to decide a recorded decision under; raises SoulUnavailable.
SoulSource = Callable[[DecisionInputs], Soul]


@dataclass(frozen=True, slots=True)
class RecordedDecision:
    """One policy_decision receipt: what it decided and what the decision read."""

    receipt_id: str
    seq: int
    timestamp: str
    command: str
    recorded: Mapping[str, object]
    inputs: DecisionInputs


@dataclass(frozen=True, slots=True)
class NotReplayable:
    """A decision receipt that cannot be decided again, and why."""

    receipt_id: str
    seq: int
    command: str
    reason: str


def read_decision(receipt: StoredReceipt) -> RecordedDecision | NotReplayable:
    """The decision a policy_decision receipt recorded, or why it cannot be replayed."""
    inputs, outputs = receipt.decoded("inputs"), receipt.decoded("outputs")
    command = str(inputs.get("command", "")) if isinstance(inputs, dict) else ""
    try:
        if not isinstance(inputs, dict) or INPUTS_KEY not in inputs:
            raise InputsError("recorded before decisions kept their inputs")
        read = DecisionInputs.from_receipt(inputs[INPUTS_KEY])
    except InputsError as exc:
        return NotReplayable(receipt.id, receipt.seq, command, str(exc))
    if not isinstance(outputs, dict) or "verdict" not in outputs:
        return NotReplayable(receipt.id, receipt.seq, command, "the verdict is not recorded")
    return RecordedDecision(receipt.id, receipt.seq, receipt.timestamp, command, outputs, read)


def recorded_souls(store: SoulStore) -> SoulSource:
    """The Soul each decision was made under: its version from `store`, refused when that
    file's content is not what decided (its digest differs)."""
    loaded: dict[int, Soul | str] = {}

    def soul_of(inputs: DecisionInputs) -> Soul:
        version = inputs.soul_version
        if version not in loaded:
            try:
                loaded[version] = store.get(version)
            except SoulError as exc:
                loaded[version] = str(exc)
        found = loaded[version]
        if isinstance(found, str):
            raise SoulUnavailable(found)
        if soul_digest(found) != inputs.soul_digest:
            raise SoulUnavailable(
                f"soul v{version} on disk is not the soul that decided (its content changed)"
            )
        return found

    return soul_of


def one_soul(soul: Soul) -> SoulSource:
    """`soul` for every decision: what it would have decided."""
    return lambda _inputs: soul


@dataclass(frozen=True, slots=True)
class Step:
    """One decision replayed: the recorded one beside the one decided again."""

    number: int
    decision: RecordedDecision
    recomputed: Mapping[str, object]

    @property
    def differences(self) -> tuple[str, ...]:
        """What differs, field by field: "verdict: needs_approval, now allow"."""
        recorded = self.decision.recorded
        return tuple(
            f"{name}: {_shown(recorded.get(name))}, now {_shown(self.recomputed.get(name))}"
            for name in COMPARED
            if recorded.get(name) != self.recomputed.get(name)
        )

    @property
    def matches(self) -> bool:
        """The same decision as recorded."""
        return not self.differences

    def explain(self) -> str:
        """The step and why it differs, in one line."""
        head = f"step {self.number} ({self.decision.command or self.decision.receipt_id})"
        return f"{head}: {'; '.join(self.differences) or 'same decision'}"


@dataclass(frozen=True, slots=True)
class ReplayReport:
    """A request's decisions replayed in order, and those that could not be."""

    steps: tuple[Step, ...]
    not_replayable: tuple[NotReplayable, ...]

    @property
    def first_mismatch(self) -> Step | None:
        """The first step decided differently, if any."""
        return next((step for step in self.steps if not step.matches), None)

    @property
    def ok(self) -> bool:
        """Every replayable decision came out the same."""
        return self.first_mismatch is None


def replay(receipts: Iterable[StoredReceipt], souls: SoulSource) -> ReplayReport:
    """Decide each recorded decision again (in the receipts' order) under `souls`."""
    steps: list[Step] = []
    skipped: list[NotReplayable] = []
    for number, receipt in enumerate(receipts, start=1):
        found = read_decision(receipt)
        if isinstance(found, NotReplayable):
            skipped.append(found)
            continue
        try:
            soul = souls(found.inputs)
        except SoulUnavailable as exc:
            skipped.append(NotReplayable(found.receipt_id, found.seq, found.command, str(exc)))
            continue
        steps.append(Step(number, found, decide(found.inputs, soul).snapshot()))
    return ReplayReport(tuple(steps), tuple(skipped))


def _shown(value: object) -> str:
    if isinstance(value, list):
        return "[" + ", ".join(str(item) for item in value) + "]"
    return repr(value) if isinstance(value, str) and not value else str(value)
