"""Every capability the tool fabric serves is classified by an explicit rule of the shipped Soul."""

from __future__ import annotations

from typing import Any

import pytest

from bot.tools import build_tool_router
from core.config import load_settings
from core.features import FeatureFlags
from core.governance.policy import PolicyEngine, Verdict
from core.tools.action import ToolAction
from core.tools.capability import CapabilityTokens
from core.tools.workspace import Workspace

ASK = Verdict.NEEDS_APPROVAL
RUN = Verdict.ALLOW
CASES: list[tuple[str, dict[str, Any], str, Verdict]] = [
    ("file.read", {"path": "a"}, "T0", RUN),
    ("file.list", {"path": "a"}, "T0", RUN),
    (
        "file.write",
        {"path": "a", "content": "", "in_workspace": True, "overwrites": False},
        "T1",
        RUN,
    ),
    (
        "file.write",
        {"path": "a", "content": "", "in_workspace": True, "overwrites": True},
        "T3",
        ASK,
    ),  # over an existing file
    ("file.write", {"path": "a", "content": "", "in_workspace": True}, "T3", ASK),  # unknown
    ("file.write", {"path": "a", "content": ""}, "T3", ASK),  # unknown scope: worst case
    ("file.move", {"source": "a", "target": "b", "overwrites": False}, "T1", RUN),
    ("file.move", {"source": "a", "target": "b", "overwrites": True}, "T3", ASK),
    ("file.delete", {"path": "a"}, "T3", ASK),
    ("repo.status", {}, "T0", RUN),
    ("repo.diff", {}, "T0", RUN),
    ("repo.apply_patch", {"patch": ""}, "T1", RUN),
    ("repo.commit", {"message": "m"}, "T2", RUN),
    ("repo.branch", {"name": "b"}, "T2", RUN),
    ("repo.checkout", {"ref": "b"}, "T2", RUN),
    ("ui.scaffold", {"template": "static_page", "path": "site"}, "T1", RUN),
    ("net.request", {"method": "GET", "url": "http://x/"}, "T1", RUN),
    ("net.request", {"method": "HEAD", "url": "http://x/"}, "T1", RUN),
    ("net.request", {"method": "POST", "url": "http://x/"}, "T3", ASK),
    ("net.request", {"method": "delete", "url": "http://x/"}, "T3", ASK),
    ("net.request", {"url": "http://x/"}, "T3", ASK),  # no method named: worst case
    ("deploy", {}, "T3", ASK),
]


@pytest.mark.parametrize(("capability", "params", "tier", "verdict"), CASES)
def test_tiers_of_tool_actions(
    policy: PolicyEngine, capability: str, params: dict[str, Any], tier: str, verdict: Verdict
) -> None:
    decision = policy.decide(ToolAction(capability, None, params))
    assert (decision.tier, decision.verdict) == (tier, verdict)
    assert decision.rules  # a named rule decided, not the default tier


def test_every_served_capability_has_a_rule(
    policy: PolicyEngine, tokens: CapabilityTokens, ws: Workspace
) -> None:
    router = build_tool_router(load_settings(environ={}), FeatureFlags({}), ws, tokens)
    served = router.capabilities()
    assert served >= {"shell.exec", "file.write", "repo.commit", "net.request", "deploy"}
    assert {c for c, *_ in CASES} | {"shell.exec"} == served
    unruled = [c for c in served if not policy.decide(ToolAction(c, "ls", {})).rules]
    assert unruled == []
