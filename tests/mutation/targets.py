"""Which tests a mutated file is run against: a few files each, so a run takes minutes."""

from __future__ import annotations

SECURITY = "tests/core/security"
APPROVAL_TESTS = (
    "tests/core/governance/test_approval_binding.py",
    "tests/core/governance/test_run_and_approvals.py",
)
TARGETS: dict[str, tuple[str, ...]] = {
    "core/security/tokens.py": (f"{SECURITY}/test_tokens.py",),
    "core/security/pairing.py": (f"{SECURITY}/test_pairing.py",),
    "core/security/viewer_access.py": (f"{SECURITY}/test_viewer_access.py",),
    "core/security/gate.py": (f"{SECURITY}/test_gate.py",),
    "core/security/ratelimit.py": (f"{SECURITY}/test_ratelimit.py",),
    "core/security/owners.py": (f"{SECURITY}/test_pairing.py",),
    "core/governance/approval_service.py": APPROVAL_TESTS,
    "core/governance/approval_transitions.py": APPROVAL_TESTS,
}


def chosen(names: list[str]) -> list[str]:
    """The mapped files under any of `names` (a file or a folder, e.g. core/security)."""
    picked = [p for p in TARGETS if any(p == n or p.startswith(n.rstrip("/") + "/") for n in names)]
    return picked
