"""The digest as a card: fields for the numbers, a few lines for what needs a look."""

from __future__ import annotations

from core.digest.collect import DigestData
from core.events import Button, Card, CardKind
from core.security.owner_view import OwnerView

MAX_LINES = 5


def _counts(counter: dict[str, int]) -> str:
    return ", ".join(f"{k} {v}" for k, v in sorted(counter.items())) or "none"


def _ledger_line(data: DigestData) -> str:
    report = data.verify
    if report is None:
        return "not checked"
    if report.ok:
        return f"verified, {report.checked:,} receipts intact"
    at = f" at receipt #{report.first_bad_seq}" if report.first_bad_seq is not None else ""
    return f"TAMPERED{at}: {report.reason}"


def _fingerprint(data: DigestData, owner: OwnerView) -> str:
    if data.checkpoint is None:
        verified = data.verify is not None and data.verify.ok
        return "none (the ledger is not signed)" if verified else "none (it does not verify)"
    signed = owner.when_stamp(data.checkpoint.time, data.until)
    return f"{data.checkpoint.fingerprint} (signed {signed})"


def _key(data: DigestData) -> str:
    """The fingerprint of the key that signs the checkpoints: the chat witnesses it too."""
    if data.verify is None:
        return "not checked"
    return data.verify.key or "none (the ledger is not signed)"


def digest_card(
    data: DigestData, card_id: str, buttons: tuple[Button, ...], owner: OwnerView
) -> Card:
    """The digest card for `data`, its times in the owner's (as of the digest's end)."""
    at = data.until
    health = [f"{owner.when_stamp(stamp, at)} {what}" for stamp, what in data.health[-MAX_LINES:]]
    fields = (
        ("Period", f"{owner.when(data.since, at)} to {owner.when(at, at)}"),
        ("Actions by tier", _counts(data.actions_by_tier)),
        (
            "Approvals",
            f"decided: {_counts(data.approvals_decided)}; pending: {data.approvals_pending}",
        ),
        ("Failures", str(len(data.failures))),
        ("Health", ", ".join(health) or "no changes"),
        ("Jobs", _counts(data.jobs)),
        ("Tokens", f"{data.tokens:,} (${data.cost_usd:.4f})"),
        ("Ledger", _ledger_line(data)),
        ("Fingerprint", _fingerprint(data, owner)),
        ("Key", _key(data)),
    )
    lines: list[str] = []
    if data.misses:
        missed = [
            f"{job} ({owner.when_stamp(stamp, at)})" for job, stamp in data.misses[:MAX_LINES]
        ]
        lines.append("Missed while down: " + ", ".join(missed))
    if data.failures:
        lines.append("Latest failures:")
        lines.extend(f"- {line}" for line in data.failures[:MAX_LINES])
    return Card(
        kind=CardKind.DIGEST,
        title="Digest",
        body="\n".join(lines) or "Nothing needs your attention.",
        fields=fields,
        buttons=buttons,
        correlation_id=card_id,
    )


def failures_card(data: DigestData) -> Card:
    """What failed in the digest's period."""
    body = "\n".join(f"- {line}" for line in data.failures[:30]) or "No failures."
    more = len(data.failures) - 30
    if more > 0:
        body += f"\n... and {more} more (see the receipts)"
    return Card(kind=CardKind.REPLY, title="Failures since the last digest", body=body)
