"""The digest as a card: fields for the numbers, a few lines for what needs a look."""

from __future__ import annotations

from datetime import UTC, datetime

from core.digest.collect import DigestData
from core.events import Button, Card, CardKind

MAX_LINES = 5


def _when(ts: float) -> str:
    return datetime.fromtimestamp(ts, UTC).strftime("%Y-%m-%d %H:%M UTC")


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


def _fingerprint(data: DigestData) -> str:
    if data.checkpoint is None:
        verified = data.verify is not None and data.verify.ok
        return "none (the ledger is not signed)" if verified else "none (it does not verify)"
    return f"{data.checkpoint.fingerprint} (signed {data.checkpoint.time})"


def _key(data: DigestData) -> str:
    """The fingerprint of the key that signs the checkpoints: the chat witnesses it too."""
    if data.verify is None:
        return "not checked"
    return data.verify.key or "none (the ledger is not signed)"


def digest_card(data: DigestData, card_id: str, buttons: tuple[Button, ...]) -> Card:
    """The digest card for `data`."""
    fields = (
        ("Period", f"{_when(data.since)} to {_when(data.until)}"),
        ("Actions by tier", _counts(data.actions_by_tier)),
        (
            "Approvals",
            f"decided: {_counts(data.approvals_decided)}; pending: {data.approvals_pending}",
        ),
        ("Failures", str(len(data.failures))),
        ("Health", ", ".join(data.health[-MAX_LINES:]) or "no changes"),
        ("Jobs", _counts(data.jobs)),
        ("Tokens", f"{data.tokens:,} (${data.cost_usd:.4f})"),
        ("Ledger", _ledger_line(data)),
        ("Fingerprint", _fingerprint(data)),
        ("Key", _key(data)),
    )
    lines: list[str] = []
    if data.misses:
        lines.append("Missed while down: " + ", ".join(data.misses[:MAX_LINES]))
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
