"""Amendments: proposed new soul texts that the owner approves before they become a version.

PENDING -> APPROVED -> ACTIVATED, and PENDING or APPROVED -> REJECTED; nothing else. Each
amendment is a JSON file in `<state_dir>/amendments/`, so the queue survives restarts.
The version number is the store's business: a proposal's `version:` line is set to the next
free number when proposed and again, if another version appeared since, when activated.
"""

from __future__ import annotations

import difflib
import logging
import re
import uuid
from datetime import UTC, datetime
from enum import StrEnum

import yaml
from pydantic import BaseModel, ConfigDict, ValidationError

from soul.atomic import write_atomic
from soul.errors import (
    AmendmentError,
    AmendmentNotFound,
    InvalidTransition,
    SoulRejected,
    StaleAmendment,
)
from soul.linter import lint_text
from soul.report import LintReport
from soul.store import SoulStore, version_filename

log = logging.getLogger(__name__)

_ID = re.compile(r"^[0-9a-f]{12}$")
_VERSION_LINE = re.compile(r"^version:[ \t]*[^\s#]*", re.MULTILINE)


class AmendmentStatus(StrEnum):
    """Where an amendment is in its life."""

    PENDING = "PENDING"
    APPROVED = "APPROVED"
    ACTIVATED = "ACTIVATED"
    REJECTED = "REJECTED"


_NEXT: dict[AmendmentStatus, frozenset[AmendmentStatus]] = {
    AmendmentStatus.PENDING: frozenset({AmendmentStatus.APPROVED, AmendmentStatus.REJECTED}),
    AmendmentStatus.APPROVED: frozenset({AmendmentStatus.ACTIVATED, AmendmentStatus.REJECTED}),
}


class Amendment(BaseModel):
    """A proposed soul text, the version it was written against, and its fate.

    `findings` are the lint findings (one line each) from the last lint; `note` says why it was
    decided as it was.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str
    base_version: int
    base_yaml: str
    proposed_yaml: str
    status: AmendmentStatus
    created_at: datetime
    decided_at: datetime | None = None
    activated_at: datetime | None = None
    activated_version: int | None = None
    note: str = ""
    findings: tuple[str, ...] = ()


NO_CHANGE = "proposes no change"


def propose(store: SoulStore, yaml_text: str, *, note: str = "") -> Amendment:
    """Record a proposal against the active version; one failing lint is REJECTED at once."""
    base = store.active_version()
    base_yaml = store.text(base)
    proposed = _stamp_version(yaml_text, _next_version(store))
    amendment_id = uuid.uuid4().hex[:12]
    report = lint_text(proposed, f"amendment {amendment_id}")
    amendment = Amendment(
        id=amendment_id,
        base_version=base,
        base_yaml=base_yaml,
        proposed_yaml=proposed,
        status=AmendmentStatus.PENDING,
        created_at=_now(),
        note=note,
        findings=_lines(report),
    )
    if not report.ok:
        amendment = _move(amendment, AmendmentStatus.REJECTED, "rejected by the linter")
    elif meaning(base_yaml) == meaning(proposed):
        amendment = _move(amendment, AmendmentStatus.REJECTED, NO_CHANGE)
    _save(store, amendment)
    return amendment


def diff(amendment: Amendment) -> str:
    """Unified diff from the base version's text to the proposed text."""
    lines = difflib.unified_diff(
        amendment.base_yaml.splitlines(),
        amendment.proposed_yaml.splitlines(),
        fromfile=version_filename(amendment.base_version),
        tofile=f"amendment {amendment.id}",
        lineterm="",
    )
    return "\n".join(lines)


def approve(store: SoulStore, amendment_id: str, *, note: str = "") -> Amendment:
    """The owner agreed: PENDING -> APPROVED (nothing is activated yet)."""
    amendment = _move(load(store, amendment_id), AmendmentStatus.APPROVED, note)
    _save(store, amendment)
    return amendment


def reject(store: SoulStore, amendment_id: str, *, note: str = "") -> Amendment:
    """The owner declined: PENDING or APPROVED -> REJECTED."""
    amendment = _move(load(store, amendment_id), AmendmentStatus.REJECTED, note)
    _save(store, amendment)
    return amendment


def activate(store: SoulStore, amendment_id: str) -> Amendment:
    """APPROVED -> ACTIVATED: lint again, write the next version and point ACTIVE at it.

    Raises StaleAmendment if the active version is no longer the base (the amendment stays
    APPROVED), or SoulRejected if the text now fails lint (the amendment becomes REJECTED).
    """
    amendment = load(store, amendment_id)
    _check_move(amendment, AmendmentStatus.ACTIVATED)
    active = store.active_version()
    if active != amendment.base_version:
        raise StaleAmendment(
            f"amendment {amendment.id} was written against v{amendment.base_version}, "
            f"but v{active} is active now; propose it again"
        )
    version = _next_version(store)
    text = _stamp_version(amendment.proposed_yaml, version)
    try:
        store.activate(version, text=text)
    except SoulRejected as exc:
        rejected = _move(amendment, AmendmentStatus.REJECTED, "failed lint on activation")
        _save(store, rejected.model_copy(update={"findings": _lines(exc.report)}))
        raise
    done = _move(amendment, AmendmentStatus.ACTIVATED, amendment.note)
    done = done.model_copy(update={"activated_version": version, "proposed_yaml": text})
    _save(store, done)
    return done


def load(store: SoulStore, amendment_id: str) -> Amendment:
    """One amendment by id; raises AmendmentNotFound or AmendmentError (unreadable file)."""
    if not _ID.match(amendment_id):
        raise AmendmentNotFound(f"no amendment {amendment_id[:40]!r}")
    path = store.state_dir / "amendments" / f"{amendment_id}.json"
    try:
        return Amendment.model_validate_json(path.read_bytes())
    except FileNotFoundError:
        raise AmendmentNotFound(f"no amendment {amendment_id!r}") from None
    except (OSError, ValidationError) as exc:
        raise AmendmentError(f"amendment {amendment_id} is unreadable: {exc}") from None


def list_amendments(store: SoulStore) -> list[Amendment]:
    """Every readable amendment, oldest first (unreadable files are logged and skipped)."""
    folder = store.state_dir / "amendments"
    found: list[Amendment] = []
    for path in sorted(folder.glob("*.json")) if folder.is_dir() else []:
        try:
            found.append(load(store, path.stem))
        except AmendmentError as exc:
            log.warning("soul: skipping %s: %s", path.name, exc)
    return sorted(found, key=lambda a: a.created_at)


def _check_move(amendment: Amendment, to: AmendmentStatus) -> None:
    if to not in _NEXT.get(amendment.status, frozenset()):
        raise InvalidTransition(
            f"amendment {amendment.id} is {amendment.status.value}; it cannot become {to.value}"
        )


def _move(amendment: Amendment, to: AmendmentStatus, note: str) -> Amendment:
    _check_move(amendment, to)
    now = _now()
    update: dict[str, object] = {"status": to, "note": note or amendment.note}
    update["activated_at" if to is AmendmentStatus.ACTIVATED else "decided_at"] = now
    return amendment.model_copy(update=update)


def _save(store: SoulStore, amendment: Amendment) -> None:
    path = store.state_dir / "amendments" / f"{amendment.id}.json"
    write_atomic(path, amendment.model_dump_json(indent=2) + "\n")


def _next_version(store: SoulStore) -> int:
    return max(store.versions(), default=0) + 1


def meaning(text: str) -> object:
    """What a soul's text says, its version (always bumped), comments and layout aside."""
    data = yaml.safe_load(text)
    if isinstance(data, dict):
        data.pop("version", None)
    return data


def _stamp_version(text: str, version: int) -> str:
    """Set the top-level `version:` line (comments elsewhere untouched)."""
    return _VERSION_LINE.sub(f"version: {version}", text, count=1)


def _lines(report: LintReport) -> tuple[str, ...]:
    return tuple(f"{f.severity.value} {f.describe()}" for f in report.findings)


def _now() -> datetime:
    return datetime.now(UTC)
