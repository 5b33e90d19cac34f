"""What onboarding says: one card per step, the words that work at any step, the summary."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from core.events import Card, CardKind
from core.llm.key_check import KeyCheck
from core.onboarding.progress import STEPS, TITLES, Progress, Status, Step

GREETING = "Hello, I'm Lancelot"
WORDS = (
    "Words that work at any step: STATUS, BACK, RESTART STEP, ASK AGAIN (this question "
    "again), RESET (start over), SKIP (use the defaults and just talk). Commands work too: "
    "/help lists them, /status shows how I am."
)
KEY_REFUSED = (
    "That looks like a key, so I did not keep it: whatever is typed here stays in the chat "
    "history. Please delete the message and rotate the key if it is real. Keys come from the "
    "environment (OPENAI_API_KEY, ANTHROPIC_API_KEY, GEMINI_API_KEY) or from `lancelot setup` "
    "in the terminal where Lancelot runs; then restart me and tap a provider here."
)


@dataclass(frozen=True, slots=True)
class ChannelNote:
    """Another channel, as the channels step shows it: attached (a test card can go to it)
    or, when not, what to set to have it."""

    name: str  # the bus's name: "telegram", "gchat", "console"
    label: str  # "Telegram", "Google Chat"
    attached: bool
    hint: str = ""  # how to set it up, when it is not


def heading(progress: Progress) -> str:
    """ "Step 2 of 4: the model provider"."""
    return f"Step {progress.number} of {len(STEPS)}: {TITLES[progress.step]}"


def name_card(progress: Progress, *, first: bool) -> Card:
    """The first question (the greeting on the very first card)."""
    ask = "What should I call you? Type your name."
    if progress.name:
        ask += f" (Now: {progress.name}.)"
    if first:
        intro = (
            "Four short questions set me up: your name, the model I think with, your "
            f"timezone and your channels. One answer a message.\n\n{heading(progress)}. {ask}"
        )
        return Card(CardKind.REPLY, GREETING, f"{intro}\n\n{WORDS}")
    return Card(CardKind.REPLY, heading(progress), f"{ask}\n\n{WORDS}")


def provider_body(checks: Sequence[KeyCheck], current: str | None, local: bool = False) -> str:
    """What the provider step says of the keys found and their live checks (`local`: a
    local model can answer small jobs meanwhile)."""
    meanwhile = "answer commands and use my local model" if local else "answer commands only"
    if not checks:
        return (
            f"No model provider key is set, so for now I {meanwhile}. Keys come from "
            "`lancelot setup` in the terminal where I run, or from the environment "
            "(OPENAI_API_KEY, ANTHROPIC_API_KEY, GEMINI_API_KEY); never type a key here. "
            "Tap Continue (or type NEXT) to go on."
        )
    working = [c.provider for c in checks if c.ok]
    if not working:
        return (
            f"No key answered (see below), so for now I {meanwhile}. Fix the key with "
            "`lancelot setup` or in the environment, restart me, and type ASK AGAIN to check "
            "again; or tap Continue."
        )
    now = f" Now: {current}." if current else ""
    return f"Which provider should I think with? I checked each key with a tiny call.{now}"


def check_fields(checks: Sequence[KeyCheck]) -> tuple[tuple[str, str], ...]:
    """One line per provider: ✓ or ✗ and what its check found."""
    return tuple((c.provider, f"{'✓' if c.ok else '✗'} {c.detail}") for c in checks)


def timezone_body(progress: Progress, default: str) -> str:
    """The timezone question."""
    now = progress.timezone or default
    return (
        f"Which timezone are you in (now: {now})? Reminders and quiet hours follow it at "
        "once, the jobs in scheduler.yaml from my next start. Type a name like Europe/Paris "
        "or America/New_York, or a city."
    )


def channels_body(current: str, others: Sequence[ChannelNote]) -> str:
    """The channels step: what else is set up, and how to add what is not."""
    lines = [f"You are talking to me on {current}."]
    for note in others:
        if note.attached:
            lines.append(f"{note.label} is set up too: tap to send it a test card.")
        else:
            lines.append(f"{note.label} is not set up ({note.hint}).")
    lines.append("Tap Finish (or type DONE) when you are ready.")
    return "\n".join(lines)


def summary(progress: Progress, provider: str | None, timezone: str) -> Card:
    """The last card: what was chosen, or the defaults kept after SKIP."""
    name = progress.name or "(not set)"
    fields = (
        ("Name", name),
        ("Model", provider or "none (commands and the local model only)"),
        ("Timezone", timezone),
    )
    if progress.status is Status.SKIPPED:
        body = (
            "Skipped: I keep the defaults below. Talk to me as you like; `/start setup` asks "
            "the questions again."
        )
        return Card(CardKind.REPLY, "Onboarding skipped", body, fields=fields)
    hello = f"All set, {progress.name}." if progress.name else "All set."
    body = f"{hello} Scheduled jobs run from now on. `/start setup` asks the questions again."
    return Card(CardKind.REPLY, "Onboarding done", body, fields=fields)


def status_card(progress: Progress, provider: str | None, timezone: str) -> Card:
    """STATUS: where onboarding stands and the answers so far."""
    fields = (
        ("Step", heading(progress) if progress.status is Status.IN_PROGRESS else progress.label()),
        ("Name", progress.name or "(not yet)"),
        ("Model", provider or "(none yet)"),
        ("Timezone", timezone),
    )
    return Card(CardKind.REPLY, "Onboarding", WORDS, fields=fields)


def step_title(step: Step) -> str:
    """A step's title, for notes ("the model provider")."""
    return TITLES[step]
