"""/skills: the installed skills with Enable/Disable buttons, running one, proposing one."""

from __future__ import annotations

import asyncio
import json
import uuid
from dataclasses import dataclass

from core.commands.registry import CommandContext, CommandRegistry, PressContext, Router
from core.errors import PermanentError
from core.events import Button, Card, CardKind
from core.security.tokens import ActionTokens
from core.skills.factory import generate_skeleton
from core.skills.proposals import DECIDE, SkillProposals
from core.skills.registry import SkillRecord, SkillRegistry
from core.skills.runner import RunStatus, SkillRun, SkillRunner

TOGGLE = "skills.toggle"
USAGE = (
    "/skills lists the skills; /skills run <name> {json arguments} runs one;\n"
    "/skills new <name> <description> proposes a new skill for you to approve."
)
MAX_BODY = 3000


@dataclass
class SkillCommands:
    """Handlers wired by the composition root."""

    registry: CommandRegistry
    skills: SkillRegistry
    runner: SkillRunner
    proposals: SkillProposals
    tokens: ActionTokens

    def register(self) -> None:
        """Add /skills and its buttons."""
        router = Router("skills")
        router.command(
            "skills",
            "the skills; run one, or propose a new one",
            self.skills_command,
            usage="[run <name> {json} | new <name> <description>]",
        )
        router.action(TOGGLE, self.on_toggle)
        router.action(DECIDE, self.proposals.on_press)
        self.registry.include(router)

    async def skills_command(self, ctx: CommandContext) -> Card | None:
        """Dispatch on the first word."""
        verb, _, rest = ctx.args.partition(" ")
        if verb == "run":
            return await self._run(rest.strip(), ctx)
        if verb == "new":
            return await self._new(rest.strip(), ctx)
        if verb:
            return Card(CardKind.REPLY, "Usage", USAGE)
        return await self.listing(uuid.uuid4().hex)

    async def listing(self, card_id: str) -> Card:
        """Every skill with its state and one Enable or Disable button."""
        records = await self.skills.all()
        if not records:
            return Card(
                CardKind.REPLY, "Skills", "No skills are installed.", correlation_id=card_id
            )
        buttons = []
        for record in records:
            label = f"{'Disable' if record.enabled else 'Enable'} {record.name}"
            payload = {"name": record.name, "enable": not record.enabled}
            buttons.append(Button(label, await self.tokens.issue(TOGGLE, payload, card_id)))
        return Card(
            CardKind.REPLY,
            "Skills",
            "\n".join(_line(r) for r in records) + f"\n\n{USAGE}",
            buttons=tuple(buttons),
            correlation_id=card_id,
        )

    async def on_toggle(self, ctx: PressContext) -> Card:
        """Enable or disable one skill, then show the list again on the same card."""
        name, enable = str(ctx.payload.get("name")), bool(ctx.payload.get("enable"))
        try:
            await self.skills.set_enabled(name, enable, ctx.receipt_id)
        except PermanentError as exc:
            card = await self.listing(ctx.card_id)
            return Card(
                card.kind,
                card.title,
                f"{exc.user_message}\n\n{card.body}",
                buttons=card.buttons,
                correlation_id=ctx.card_id,
            )
        return await self.listing(ctx.card_id)

    async def _run(self, text: str, ctx: CommandContext) -> Card:
        name, _, raw = text.partition(" ")
        if not name:
            return Card(CardKind.REPLY, "Usage", USAGE)
        try:
            args = json.loads(raw) if raw.strip() else {}
        except json.JSONDecodeError as exc:
            return Card(CardKind.REPLY, "Arguments are not JSON", f"{exc.msg}\n\n{USAGE}")
        if not isinstance(args, dict):
            return Card(CardKind.REPLY, "Arguments are not JSON", f"Give an object.\n\n{USAGE}")
        run = await self.runner.run(
            name, args, via=ctx.event.channel, parent_id=ctx.receipt_id, quest_id=ctx.receipt_id
        )
        return _run_card(run)

    async def _new(self, text: str, ctx: CommandContext) -> Card | None:
        name, _, description = text.partition(" ")
        if not name:
            return Card(CardKind.REPLY, "Usage", USAGE)
        staging = self.proposals.staging_folder()
        try:
            folder = await asyncio.to_thread(
                generate_skeleton, name, staging, description.strip() or "A new skill."
            )
            await self.proposals.propose(folder, parent_id=ctx.receipt_id)
        except PermanentError as exc:
            return Card(CardKind.REPLY, "Skill not proposed", str(exc))
        return None  # the proposal card itself is the answer


def _line(record: SkillRecord) -> str:
    state = "enabled" if record.enabled else "disabled"
    return f"{record.name} {record.version}: {state} ({record.ownership}, {record.signature})"


def _run_card(run: SkillRun) -> Card:
    titles = {
        RunStatus.SUCCESS: "done",
        RunStatus.FAILURE: "failed",
        RunStatus.REFUSED: "not run",
        RunStatus.WAITING: "waiting for your approval",
    }
    lines = [run.message] if run.status is not RunStatus.SUCCESS else []
    lines += list(run.actions)
    if run.outputs:
        lines.append(json.dumps(run.outputs, indent=1, ensure_ascii=False, default=str))
    body = "\n\n".join(lines) or "(no output)"
    return Card(CardKind.REPLY, f"Skill {run.name}: {titles[run.status]}", body[:MAX_BODY])
