"""Wires files to and from the phone: the inbox and voice notes (the orchestrator's intake),
/get, and the `file.send` capability behind the agent's send_file tool."""

from __future__ import annotations

from dataclasses import dataclass

from bot.governance import GovernanceKit
from bot.kernel import Kernel
from core.files.commands import FileCommands
from core.files.inbox import Inbox
from core.files.intake import Intake
from core.files.outgoing import CAPABILITIES, FileSender, FileSendOps
from core.llm.providers import choose_flagship
from core.llm.transcription import transcriber_for
from core.tools.capability import CapabilityTokens
from core.tools.workspace import Workspace

MB = 1024 * 1024


@dataclass(frozen=True, slots=True)
class FilesKit:
    """What the rest of the app uses of files: the intake and the sender."""

    intake: Intake
    sender: FileSender


async def wire_files(app: Kernel, kit: GovernanceKit | None) -> FilesKit:
    """Register /get; give governance the file.send provider; build the intake, with the
    flagship provider's transcriber when it has one (OpenAI, Gemini)."""
    settings = app.settings
    workspace = Workspace(app.home / "workspace")
    transcriber, no_voice = transcriber_for(
        choose_flagship(settings.llm).config, settings.files.transcribe_model
    )
    if transcriber is not None:
        app.stack.push_async_callback(transcriber.aclose)
    inbox = Inbox(workspace, int(settings.files.max_in_mb * MB))
    intake = Intake(app.bus, inbox, app.ledger, transcriber, no_voice)
    sender = FileSender(app.bus, workspace, app.ledger, int(settings.files.max_out_mb * MB))
    FileCommands(sender).register(app.commands)
    if kit is not None:
        provider = FileSendOps(sender, CapabilityTokens(app.secret))
        kit.tools.register(provider, CAPABILITIES, local=True)
    return FilesKit(intake, sender)
