"""What the owner sends besides text: files fetched into the inbox, voice notes heard, and
everything else (stickers, locations, edits) answered with what Lancelot takes instead.

The orchestrator calls `Intake.take` after the message's `inbound` receipt; the result is
either a complete reply or the text (caption, transcript) to handle as usual, with the
attachments of the turn on the event and a note for the model naming them.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, replace

from core.bus import Bus
from core.channel import FileFetching
from core.commands.registry import parse_command
from core.errors import DeliveryRejected, LancelotError
from core.events import Attachment, Card, CardKind, FileKind, FileOffer, Inbound
from core.files.inbox import FileRefused, Inbox, megabytes
from core.llm.transcription import Transcriber
from core.receipts.base import ReceiptStore
from core.receipts.model import Receipt, ReceiptStatus
from core.receipts.registry import FileReceipt
from core.tools.workspace import MOUNT

log = logging.getLogger(__name__)

TAKES = "I take text, commands, photos, documents, audio, video and voice notes."
EDITED = (
    "I don't re-run edited messages: I answered the message as first sent. "
    "Send the new version as a new message if you want it handled."
)


@dataclass(frozen=True, slots=True)
class Taken:
    """What came of a message's files: the event with its attachments and the text to
    handle (empty: nothing to hand on), or a complete `reply`; `notes` go on the reply."""

    event: Inbound
    text: str
    notes: tuple[tuple[str, str], ...] = ()
    reply: Card | None = None
    heard: bool = False  # `text` is a transcript: screen it like typed text

    def annotate(self, card: Card) -> Card:
        """The handler's reply with what was saved and heard on top."""
        return replace(card, fields=self.notes + card.fields) if self.notes else card


def model_note(attachments: Sequence[Attachment]) -> str:
    """How the model learns of the turn's files (paths it can read with its tools)."""
    lines = [
        f"- {a.kind.value}: {MOUNT / a.path} ({a.mime or 'unknown type'}, "
        f"{megabytes(a.size)}, sha256 {a.sha256[:16]})"
        for a in attachments
    ]
    return "\n\n[Files the owner sent with this message, saved in the workspace:]\n" + "\n".join(
        lines
    )


class Intake:
    """Turns a message's files and unhandled parts into attachments, receipts and notes."""

    def __init__(
        self,
        bus: Bus,
        inbox: Inbox,
        ledger: ReceiptStore,
        transcriber: Transcriber | None,
        no_voice: str,
    ) -> None:
        """`no_voice`: why voice notes cannot be heard, when `transcriber` is None."""
        self._bus = bus
        self._inbox = inbox
        self._ledger = ledger
        self._transcriber = transcriber
        self._no_voice = no_voice

    async def take(self, event: Inbound, text: str, receipt_id: str) -> Taken:
        """Fetch, save and hear what came with `event` (text: its gated caption)."""
        if event.unhandled:
            return Taken(event, "", reply=self._unhandled(event, receipt_id))
        saved: list[Attachment] = []
        notes: list[tuple[str, str]] = []
        for offer in event.files:
            attachment = await self._fetch(event, offer, receipt_id, notes)
            if attachment is not None:
                saved.append(attachment)
                notes.append(("Saved", f"{MOUNT / attachment.path} ({megabytes(attachment.size)})"))
        event = replace(event, attachments=tuple(saved))
        heard = False
        voice = next((a for a in saved if _spoken(a, text)), None)
        if voice is not None:
            transcript = await self._hear(voice, receipt_id, notes)
            if transcript:
                text, heard = f"{text}\n\n{transcript}".strip(), True
        if not text.strip():
            return Taken(event, "", reply=self._receipt_card(saved, notes))
        if saved and parse_command(text) is None:  # a command's arguments stay as typed
            text += model_note(saved)
        return Taken(event, text, tuple(notes), heard=heard)

    def _unhandled(self, event: Inbound, receipt_id: str) -> Card:
        self._record(FileReceipt.UNHANDLED_UPDATE, event.unhandled, receipt_id)
        if event.unhandled == "an edited message":
            return Card(CardKind.REPLY, "Edit not re-run", EDITED)
        return Card(CardKind.REPLY, f"I can't take {event.unhandled}", TAKES)

    async def _fetch(
        self, event: Inbound, offer: FileOffer, receipt_id: str, notes: list[tuple[str, str]]
    ) -> Attachment | None:
        what = offer.name or f"a {offer.kind.value}"
        channel: object = next((c for c in self._bus.channels if c.name == event.channel), None)
        try:
            self._inbox.check(offer)
            if not isinstance(channel, FileFetching):
                raise FileRefused(
                    f"{event.channel} cannot fetch files",
                    user_message=f"I can't download files sent on {event.channel}.",
                )
            attachment = await self._inbox.save(offer, channel.fetch_file(offer))
        except LancelotError as exc:
            if not isinstance(exc, FileRefused):
                log.warning("fetching %s on %s failed: %s", offer.kind, event.channel, exc)
            self._record(
                FileReceipt.FILE_REFUSED,
                offer.kind.value,
                receipt_id,
                inputs=_offered(offer),
                status=ReceiptStatus.REFUSED
                if isinstance(exc, FileRefused)
                else ReceiptStatus.FAILURE,
                error=str(exc),
            )
            notes.append(("Not saved", f"{what}: {_why(exc)}"))
            return None
        self._record(
            FileReceipt.FILE_RECEIVED,
            offer.kind.value,
            receipt_id,
            inputs=_offered(offer),
            outputs={
                "path": attachment.path,
                "size": attachment.size,
                "sha256": attachment.sha256,
                "mime": attachment.mime,
            },
        )
        return attachment

    async def _hear(self, voice: Attachment, receipt_id: str, notes: list[tuple[str, str]]) -> str:
        if self._transcriber is None:
            notes.append(("Voice", f"Not transcribed: {self._no_voice}."))
            return ""
        try:
            workspace_path = self._inbox.path_of(voice)
            transcript = await self._transcriber.transcribe(workspace_path, voice.mime)
        except LancelotError as exc:
            log.warning("transcribing %s failed: %s", voice.path, exc)
            self._record(
                FileReceipt.VOICE_TRANSCRIBED,
                self._transcriber.name,
                receipt_id,
                inputs={"path": voice.path},
                status=ReceiptStatus.FAILURE,
                error=str(exc),
            )
            notes.append(("Voice", f"Not transcribed: {exc.user_message}"))
            return ""
        self._record(
            FileReceipt.VOICE_TRANSCRIBED,
            self._transcriber.name,
            receipt_id,
            inputs={"path": voice.path, "sha256": voice.sha256},
            outputs={"chars": len(transcript)},
        )
        notes.append(("I heard", f"“{transcript}”" if transcript else "nothing (silence?)"))
        return transcript

    def _receipt_card(self, saved: list[Attachment], notes: list[tuple[str, str]]) -> Card:
        """The reply when there is nothing to act on: where the files landed, or why not."""
        if saved:
            body = "Add a caption (or ask in a message) to have me do something with it."
            return Card(CardKind.REPLY, "Saved to the inbox", body, tuple(notes))
        return Card(CardKind.REPLY, "Nothing saved", "", tuple(notes))

    def _record(
        self,
        kind: FileReceipt,
        name: str,
        receipt_id: str,
        *,
        inputs: dict[str, object] | None = None,
        outputs: dict[str, object] | None = None,
        status: ReceiptStatus = ReceiptStatus.SUCCESS,
        error: str | None = None,
    ) -> None:
        self._ledger.append(
            Receipt(
                action_type=kind.value,
                action_name=name,
                inputs=inputs or {},
                outputs=outputs or {},
                status=status,
                error_message=error,
                parent_id=receipt_id,
                quest_id=receipt_id,
            )
        )


def _why(exc: LancelotError) -> str:
    """The owner's words for a file not saved."""
    if isinstance(exc, FileRefused):
        return exc.user_message
    if isinstance(exc, DeliveryRejected):  # e.g. Telegram's cloud API: "file is too big"
        return f"the platform would not hand it over ({exc})."
    return "the download failed; please send it again."


def _spoken(attachment: Attachment, caption: str) -> bool:
    """A voice note is always heard; an audio file only when it came without words."""
    return attachment.kind is FileKind.VOICE or (
        attachment.kind is FileKind.AUDIO and not caption.strip()
    )


def _offered(offer: FileOffer) -> dict[str, object]:
    return {"name": offer.name, "mime": offer.mime, "announced_size": offer.size}
