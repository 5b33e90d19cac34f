"""/run and /approvals: the owner's governed hands (/crusader: crusader_commands.py)."""

from __future__ import annotations

import shlex
from dataclasses import dataclass, replace

from core.commands.registry import CommandContext, CommandRegistry, PressContext, Router
from core.errors import PolicyDenied
from core.events import ButtonPress, Card, CardKind, Inbound
from core.governance.approval_delivery import DECIDE
from core.governance.approval_service import ApprovalService
from core.governance.by_effect import RERUN
from core.governance.gateway import ToolGateway
from core.governance.outcomes import OutcomeKind, ToolOutcome
from core.governance.sensitive import revealing
from core.governance.undo import UndoDesk
from core.tools.action import ToolAction
from core.tools.workspace import Workspace

SHELL = "shell.exec"


def _facts(command: str, workspace: Workspace) -> dict[str, object]:
    """What governance needs to know that the command line alone does not say."""
    facts: dict[str, object] = {"in_workspace": True}
    try:
        words = shlex.split(command)
    except ValueError:
        return facts
    if words[:1] == ["mv"] and len(words) == 3:
        try:
            target = workspace.resolve(words[2])
            facts["overwrites"] = target.exists() and not target.is_dir()
        except PolicyDenied:
            facts["in_workspace"] = False
        except OSError:  # a name too long to look up: not known, so assumed to overwrite
            facts["overwrites"] = True
    return facts


def shell_action(command: str, workspace: Workspace) -> ToolAction:
    """The governed action for one shell command line in the workspace."""
    return ToolAction(SHELL, command, _facts(command, workspace))


@dataclass
class GovernanceCommands:
    """Handlers wired by the composition root."""

    registry: CommandRegistry
    gateway: ToolGateway
    approvals: ApprovalService
    workspace: Workspace
    undo: UndoDesk | None = None  # Undo buttons for applied changes (with the sandbox)

    def register(self) -> None:
        """Add /run, /approvals and the approval buttons."""
        router = Router("governance")
        router.command(
            "run", "run a command in the workspace, under governance", self.run, usage="<command>"
        )
        router.command("approvals", "what is waiting for your decision", self.pending)
        router.action(DECIDE, self.approvals.on_press)
        router.action(RERUN, self.rerun)
        self.registry.include(router)

    async def run(self, ctx: CommandContext) -> Card | None:
        """Through the one governed path: refuse, ask (the card is the answer), or run."""
        command = ctx.args.strip()
        if not command:
            return Card(CardKind.REPLY, "Usage", "/run <command>, for example /run ls -la")
        return await self._shell(command, ctx.event.channel, ctx.receipt_id, asking(ctx.event))

    async def rerun(self, ctx: PressContext) -> Card | None:
        """Dry run again a command whose approved change met a changed workspace: the new
        effects get their own card (or apply at once, if the Soul allows them). The old dry
        run was dropped when its apply found the workspace changed (the button is offered
        only then)."""
        command = str(ctx.payload.get("command") or "")
        card = await self._shell(command, ctx.event.channel, ctx.receipt_id, asking(ctx.event))
        return card or Card(CardKind.NOTICE, "Dry-run again", f"$ {command}\nA new card asks.")

    async def _shell(self, command: str, via: str, receipt_id: str, key: str | None) -> Card | None:
        """The card for one shell command: refused, ran (what it changed, with Undo), or
        None when its approval card went out (`key`: the update asking, see asking).

        A command naming a sensitive file asks first, even the owner's own: the sandbox
        shows such a file only to a run approved on a card that names it."""
        action, ask = revealing(shell_action(command, self.workspace))
        outcome = await self.gateway.run(
            action,
            via=via,
            parent_id=receipt_id,
            quest_id=receipt_id,
            wait=False,
            ask=ask,
            key=key,
        )
        if outcome.kind is OutcomeKind.DENIED:
            return _denied_card(outcome)
        if outcome.kind is OutcomeKind.WAITING:
            return None
        text = outcome.text
        rolled_back = await self.gateway.finish(receipt_id)
        if rolled_back is not None:
            text += "\n\nThe step failed its check, so its changes were undone."
        if outcome.change_id is not None:
            text += f"\n\nChanged: it {outcome.effects}."
        card = Card(CardKind.REPLY, "/run", f"$ {command}\n{text}")
        if outcome.change_id is None or self.undo is None:
            return card
        undo = await self.undo.button(outcome.change_id, card.correlation_id)
        return replace(card, buttons=(undo,)) if undo is not None else card

    async def pending(self, ctx: CommandContext) -> Card | None:
        """Resend every pending approval card here (any copy decides for all)."""
        sent = await self.approvals.resend_pending(ctx.event.channel, ctx.event.chat_id)
        if not sent:
            return Card(CardKind.REPLY, "Approvals", "Nothing is waiting for your decision.")
        return None


def asking(event: Inbound | ButtonPress) -> str | None:
    """The identity of the inbound update asking (its channel and its place in that
    channel's inbox), which a replay after a crash shares; None when the channel keeps no
    inbox (nothing comes again there)."""
    if event.arrival is None:
        return None
    kind = "message" if isinstance(event, Inbound) else "press"
    return f"{kind}:{event.channel}:{event.arrival}"


def _denied_card(outcome: ToolOutcome) -> Card:
    body = f"$ {outcome.command}\n{outcome.reason}"
    if outcome.alternatives:
        body += "\n\nInstead you could:\n" + "\n".join(f"- {a}" for a in outcome.alternatives)
    return Card(CardKind.REPLY, f"Not allowed (rule {', '.join(outcome.rules)})", body)
