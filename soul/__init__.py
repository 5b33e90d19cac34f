"""The constitution: versioned YAML, its schema, linter and amendments."""

from soul import amendments
from soul.amendments import Amendment, AmendmentStatus
from soul.effects import EFFECT_KINDS, classify_effects
from soul.errors import (
    AmendmentError,
    AmendmentNotFound,
    InvalidTransition,
    SoulError,
    SoulRejected,
    StaleAmendment,
    UnparseableCommand,
)
from soul.linter import lint, lint_file, lint_text
from soul.readonly import provably_read_only, read_only_reason
from soul.report import Finding, LintReport, Severity
from soul.rules import Action, Classification, classify, denied_by, needs_approval, stricter
from soul.schema import (
    TIERS,
    ApprovalRules,
    CrusaderPolicy,
    DenyRule,
    EffectRules,
    RiskRule,
    RuleMatch,
    SchedulingBoundaries,
    Soul,
    Tier,
    tier_rank,
)
from soul.store import SHIPPED_VERSIONS_DIR, SoulStore

__all__ = [
    "EFFECT_KINDS",
    "SHIPPED_VERSIONS_DIR",
    "TIERS",
    "Action",
    "Amendment",
    "AmendmentError",
    "AmendmentNotFound",
    "AmendmentStatus",
    "ApprovalRules",
    "Classification",
    "CrusaderPolicy",
    "DenyRule",
    "EffectRules",
    "Finding",
    "InvalidTransition",
    "LintReport",
    "RiskRule",
    "RuleMatch",
    "SchedulingBoundaries",
    "Severity",
    "Soul",
    "SoulError",
    "SoulRejected",
    "SoulStore",
    "StaleAmendment",
    "Tier",
    "UnparseableCommand",
    "amendments",
    "classify",
    "classify_effects",
    "denied_by",
    "lint",
    "lint_file",
    "lint_text",
    "needs_approval",
    "provably_read_only",
    "read_only_reason",
    "stricter",
    "tier_rank",
]
