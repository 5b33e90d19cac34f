"""The shape of a soul document: frozen pydantic models that reject unknown keys."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

Tier = Literal["T0", "T1", "T2", "T3"]
TIERS: tuple[Tier, ...] = ("T0", "T1", "T2", "T3")
HttpMethod = Literal["GET", "HEAD", "OPTIONS", "POST", "PUT", "PATCH", "DELETE"]
Channel = Literal["telegram", "gchat", "console"]

_CLOCK = r"^([01]\d|2[0-3]):[0-5]\d$"


def tier_rank(tier: Tier) -> int:
    """0 for T0 up to 3 for T3, for comparing tiers."""
    return TIERS.index(tier)


class _Part(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Allegiance(_Part):
    """Whom Lancelot serves; everyone and everything else is data, not command."""

    owner: str = Field(min_length=1)
    description: str = ""


class AutonomyPosture(_Part):
    """supervised: asks before anything beyond reads; guided: acts on low risk, asks before
    destructive or irreversible acts; autonomous: acts and reports (still bound by the soul)."""

    level: Literal["supervised", "guided", "autonomous"]
    description: str = ""


class TierDefinitions(_Part):
    """What each risk tier means, in words the owner reads."""

    T0: str
    T1: str
    T2: str
    T3: str


class RuleMatch(_Part):
    """Narrows a risk rule; every non-empty condition must hold (see `soul.rules`).

    commands: command words, each shlex-split: the first word is compared with the command's
        basename, the rest must appear in order among its arguments (``"git push"``).
        Every word is an fnmatch pattern.
    args: fnmatch patterns; at least one argument must match one of them.
    methods: HTTP methods (net.request).
    scope: where the target path is.
    overwrites: whether the action replaces an existing file.

    A fact the caller does not know (method, scope, overwrites) satisfies the condition; since
    the highest matching tier wins, an unknown is classified as the worst case.
    """

    commands: tuple[str, ...] = ()
    args: tuple[str, ...] = ()
    methods: tuple[HttpMethod, ...] = ()
    scope: Literal["workspace", "outside_workspace"] | None = None
    overwrites: bool | None = None


class RiskRule(_Part):
    """Classifies actions of one capability into a tier.

    `kind` is the action kind checked against `requires_approval`; when absent the capability
    name is the kind. Every matching rule applies and the highest tier wins.
    """

    id: str = Field(min_length=1)
    capability: str = Field(min_length=1)
    kind: str | None = None
    match: RuleMatch | None = None
    tier: Tier
    description: str = ""


class DenyRule(_Part):
    """Commands refused outright, whatever the tier or approval.

    Each entry of `commands` is a token pattern (fnmatch per token): the first token matches a
    command word, the rest appear in order after it within the same statement (pipes included).
    """

    id: str = Field(min_length=1)
    commands: tuple[Annotated[tuple[str, ...], Field(min_length=1)], ...] = Field(min_length=1)
    reason: str = Field(min_length=1)
    alternatives: tuple[str, ...] = ()


class EffectRules(_Part):
    """The tier of each kind of effect a shell command has on the workspace, as its dry run
    shows it: a command is judged by what it does, not by how it is spelled. Unknown kinds
    are refused (extra keys are errors)."""

    creates: Tier = "T1"
    moves: Tier = "T1"  # deleted here, the same content created there: nothing is lost
    overwrites: Tier = "T3"
    deletes: Tier = "T3"
    mode_changes: Tier = "T3"
    symlinks: Tier = "T2"
    git_refs_created: Tier = "T1"
    git_refs_moved: Tier = "T2"
    git_refs_deleted: Tier = "T3"
    git_history_lost: Tier = "T3"  # a ref moved so that commits no ref reaches any more
    git_refs_broken: Tier = "T3"  # a ref set to something that is not a commit
    git_index: Tier = "T1"
    git_config: Tier = "T3"


# Effects that destroy what was there: the linter keeps them at T3 (always the owner's call).
DESTRUCTIVE_EFFECTS = (
    "overwrites",
    "deletes",
    "mode_changes",
    "git_refs_deleted",
    "git_history_lost",
    "git_refs_broken",
    "git_config",
)


class RiskRules(_Part):
    """Tier definitions, classification rules, the fallback tier, the denylist, and the
    tiers of effects."""

    tiers: TierDefinitions
    default_tier: Tier = "T2"
    rules: tuple[RiskRule, ...] = ()
    denylist: tuple[DenyRule, ...] = ()
    effects: EffectRules = EffectRules()
    # MCP servers' tools: server -> tool (or "*", the rest of that server's tools) -> tier,
    # over the tier the tool's annotations give it.
    mcp: dict[str, dict[str, Tier]] = {}


class Escalation(_Part):
    """What happens to an undecided approval after `after_minutes`."""

    after_minutes: int = Field(gt=0)
    action: Literal["remind", "expire"]


class ApprovalRules(_Part):
    """How approvals reach the owner and when they lapse (a lapsed approval is a denial)."""

    timeout_minutes: int = Field(default=30, gt=0)
    escalation: Escalation
    channels: tuple[Channel, ...] = ()


class QuietHours(_Part):
    """A daily window (local "HH:MM", may wrap midnight) when non-urgent work waits."""

    start: str = Field(pattern=_CLOCK)
    end: str = Field(pattern=_CLOCK)
    timezone: str = Field(default="UTC", min_length=1)


class SchedulingBoundaries(_Part):
    """Limits on work nobody asked for just now (scheduled jobs, background tasks)."""

    allow_autonomous_irreversible: bool
    max_tier_without_approval: Tier
    quiet_hours: QuietHours | None = None
    description: str = ""


class CrusaderPolicy(_Part):
    """Crusader mode: a time-boxed burst of autonomy the owner switches on with /crusader.

    It may auto-approve only the tiers listed (the linter allows T2 at most, never T3) and
    never an action kind listed in `requires_approval`.
    """

    auto_approve_tiers: tuple[Tier, ...] = ()
    max_duration_minutes: int = Field(default=60, gt=0)
    description: str = ""


class FlowRules(_Part):
    """What the agent may send out, change and remember, by what the request has read
    (core/governance/flow.py). `ask` puts a card in front of the owner; `allow` trusts the
    model with it (the linter warns: a page could then steer it)."""

    # Data leaving the machine (a fetched address, a search query) while the request holds
    # private data, when the owner's own words did not give that address or query.
    private_egress: Literal["ask", "allow"] = "ask"
    # A change (a file, memory, a job) the owner's message did not name, once a stranger's
    # text (a page, a search result, a file from outside) is in the request.
    stranger_changes: Literal["ask", "allow"] = "ask"
    # A fact to remember in a request that read a stranger's text waits for the owner.
    stranger_memory: Literal["quarantine", "allow"] = "quarantine"
    description: str = ""


class Soul(_Part):
    """A whole soul document (soul_vN.yaml)."""

    version: int = Field(ge=1)
    name: str = Field(min_length=1)
    mission: str = Field(min_length=1)
    allegiance: Allegiance
    autonomy_posture: AutonomyPosture
    risk_rules: RiskRules
    requires_approval: tuple[str, ...]
    destructive_actions: tuple[str, ...]
    approval_rules: ApprovalRules
    tone_invariants: tuple[str, ...]
    forbid_silent_degradation: bool
    memory_ethics: tuple[str, ...]
    scheduling_boundaries: SchedulingBoundaries
    crusader: CrusaderPolicy = CrusaderPolicy()
    flow_rules: FlowRules = FlowRules()
