"""`python -m tests.mutants`: each guard of the flow rules, the approval's hash re-check and
the canonical-token checks replaced by a no-op, in a copy of the repository, must turn its
tests red. A mutant that survives is a guard no test holds.

Prints one line per mutant (killed, or SURVIVED) and exits 1 when any survives. Words given
on the command line run only the mutants whose names hold one of them.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
TESTS = (
    "tests/core/agent/attacks",
    "tests/core/agent/test_flow_rules.py",
    "tests/core/receipts/test_encoded_secrets.py",
    "tests/core/tools/test_web_fetch.py",
    "tests/core/tools/test_repo_ops.py",
)


@dataclass(frozen=True)
class Mutant:
    """One guard switched off: in `path`, `before` becomes `after`; `tests` must notice."""

    name: str
    path: str
    before: str
    after: str
    tests: tuple[str, ...] = TESTS


FLOW = "core/governance/flow.py"
CHECKS = "core/agent/flow_checks.py"
APPROVALS = "core/governance/approval_service.py"
APPROVAL_TESTS = ("tests/core/governance/test_approval_binding.py",)
BUTTON_TESTS = ("tests/core/security/test_tokens.py", "tests/core/test_orchestrator.py")
MASKS = "core/tools/sandbox/masks.py"
COOKIE_TESTS = ("tests/core/security/test_viewer_access.py", "tests/bot/web/test_receipt_page.py")
MUTANTS = (
    Mutant("no egress check", FLOW, "    if not flow.holds_private:\n", "    if True:\n"),
    Mutant("stranger's links always quoted", FLOW,
           "return any(value in text for text in self.stranger_text)", "return True"),
    Mutant("everything named by the owner", FLOW,
           "        value = value.strip()\n        if not value:\n            return False\n",
           "        return True\n"),
    Mutant("short names count as named", FLOW,
           'return "." in name or "/" in name or len(name) >= 3', "return True"),
    Mutant("no change check", FLOW,
           "    if not flow.read_strangers or not spec.changes:", "    if True:"),
    Mutant("no .git check", FLOW, "    if inside_git:", "    if False:"),
    Mutant("files are not strangers' text", "core/agent/workspace_tools.py",
           "flow=ToolFlow(CONTENTS, targets=(\"path\",)),\n    tier=\"T0\",\n    to_action=_file",
           "flow=ToolFlow(PRIVATE, targets=(\"path\",)),\n    tier=\"T0\",\n    to_action=_file"),
    Mutant("no quarantine", CHECKS,
           "provenance = Provenance.TOOL if held else Provenance.AGENT",
           "provenance = Provenance.AGENT"),
    Mutant("no sensitive-operand check", CHECKS,
           "        action, reads_sensitive = revealing(action)",
           "        reads_sensitive = None"),
    Mutant("no glob check", "core/governance/sensitive.py",
           'if not any(ch in word for ch in "*?["):', "if True:"),
    Mutant("no outbound secret check", CHECKS,
           "        return any(self._redactor.carries(text)",
           "        return False and any(self._redactor.carries(text)"),
    Mutant("no encoded masking", "core/receipts/redaction.py",
           "return self._encoded(value) if may_hold_encoding(value) else value",
           "return value"),
    Mutant("no forced ask", "core/governance/gateway.py",
           "if ask is not None and decision.verdict is not Verdict.DENY:", "if False:"),
    Mutant("no ask after a dry run", "core/governance/gateway.py",
           "if call.ask_if_changes is not None and decision.verdict",
           "if False and decision.verdict"),
    Mutant("earlier answers not read as strangers'", "core/agent/memory_bridge.py",
           "if compiled.from_strangers:", "if False:"),
    Mutant("answers kept unlabelled", "core/agent/memory_bridge.py",
           'label=STRANGERS if read_strangers else ""', 'label=""'),
    Mutant("memory in the prompt not private", "core/agent/agent.py",
           'quest.flow.knows_private("memory")', "pass"),
    Mutant("repository pointers followed", "core/tools/repo_ops.py",
           "        self._refuse_paths_out(repo)\n", ""),
    Mutant("no links listed", "core/tools/readable.py",
           "return Page(title, text, cut or more, links(root, base))",
           "return Page(title, text, cut or more)"),
    Mutant("approval's action not re-checked", APPROVALS,
           "        if (\n            approval.action.digest != ctx.payload.get(\"hash\")\n"
           "            or approval.action.digest != approval.action_hash\n        ):\n",
           "        if False:\n", APPROVAL_TESTS),
    Mutant("approval's action not held to its button's hash", APPROVALS,
           "approval.action.digest != ctx.payload.get(\"hash\")\n            or ", "",
           APPROVAL_TESTS),
    Mutant("approval's action not held to its stored hash", APPROVALS,
           "\n            or approval.action.digest != approval.action_hash", "", APPROVAL_TESTS),
    Mutant("approved action not re-checked when it runs", "core/governance/approval_transitions.py",
           "        if approval.action.digest != approval.action_hash:", "        if False:",
           APPROVAL_TESTS),
    Mutant("a sensitive read dry-run instead of asked", "core/governance/gateway.py",
           "judged_by_effect(action) and ask is None:", "judged_by_effect(action):",
           ("tests/core/agent/test_flow_rules.py",)),
    Mutant("a file tool's change not journaled", "core/tools/file_ops.py",
           "if self._changes is not None and action.capability in JOURNALED:", "if False:",
           ("tests/core/tools/effects/test_host_changes.py",
            "tests/core/agent/test_workspace_tools.py")),
    Mutant("a press replayed after a crash refused", "core/security/tokens.py",
           "            if press is not None and used_for == press:", "            if False:",
           BUTTON_TESTS),
    Mutant("any spelling of a button token", "core/security/tokens.py",
           "if not hmac.compare_digest(_spelling(raw), token.encode()):", "if False:",
           BUTTON_TESTS),
    Mutant("session MAC decoded, not compared as written", "core/security/viewer_access.py",
           "hmac.compare_digest(mac, _b64encode(self._mac(body)))",
           "hmac.compare_digest(_b64decode(mac), self._mac(body))", COOKIE_TESTS),
    Mutant("a container made before a masked file was replaced reused", MASKS,
           "    identities = frozenset((p, _identity(root, p)) for p in files | dirs)",
           "    identities: frozenset[tuple[str, Identity]] = frozenset()",
           ("tests/core/tools/sandbox/test_masks.py", "tests/core/tools/effects/test_masked.py")),
    Mutant("every repository config masked", "core/tools/sandbox/gitconfig.py",
           "_STAND_INS[key] = sanitized(raw) if holds_more(raw) else None",
           "_STAND_INS[key] = sanitized(raw)",
           ("tests/core/tools/sandbox/test_gitconfig.py",
            "tests/core/tools/effects/test_git_effects.py")),
    Mutant("a repository config's URLs keep their passwords", "core/tools/sandbox/gitconfig.py",
           "            value = _without_userinfo(value)", "            pass",
           ("tests/core/tools/sandbox/test_gitconfig.py",)),
    Mutant("viewer link trimmed before it is looked up", "core/security/viewer_access.py",
           "        digest = _token_hash(token)\n", "        digest = _token_hash(token.strip())\n",
           COOKIE_TESTS),
)  # fmt: skip


def survives(mutant: Mutant, scratch: Path) -> bool:
    """Apply `mutant` to a fresh copy and run the tests there; True when they still pass."""
    copy = scratch / "repo"
    shutil.rmtree(copy, ignore_errors=True)
    shutil.copytree(REPO, copy, ignore=shutil.ignore_patterns(".venv", ".git", "__pycache__"))
    target = copy / mutant.path
    text = target.read_text()
    if mutant.before not in text:
        raise SystemExit(f"{mutant.name}: {mutant.path} no longer holds {mutant.before!r}")
    target.write_text(text.replace(mutant.before, mutant.after, 1))
    command = [sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", *mutant.tests]
    done = subprocess.run(command, cwd=copy, capture_output=True, text=True, check=False)
    return done.returncode == 0


def main(words: list[str]) -> int:
    """Run every mutant (or those whose names hold one of `words`); exit 1 if one survives."""
    chosen = [m for m in MUTANTS if not words or any(w in m.name for w in words)]
    if not chosen:
        print(f"no mutant's name holds any of {words}", file=sys.stderr)
        return 2
    survived = []
    with tempfile.TemporaryDirectory(prefix="lancelot-mutants-") as scratch:
        for mutant in chosen:
            alive = survives(mutant, Path(scratch))
            print(f"{'SURVIVED' if alive else 'killed  '}  {mutant.name}", flush=True)
            if alive:
                survived.append(mutant.name)
    print(f"{len(chosen) - len(survived)} of {len(chosen)} mutants killed")
    return 1 if survived else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
