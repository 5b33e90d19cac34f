"""What-if over a month of recorded decisions: read them from a real ledger, decide each
again under a proposed Soul, count what changes.

Run: .venv/bin/python benchmarks/whatif.py [--count 100000]
Target (issue 35): what-if over 100,000 recorded decisions <= 10 s.

The ledger is filled through the real SqliteLedger with decisions the real PolicyEngine made
(its receipts as the gateway writes them): /run commands, agent tools, dry-run effect sets,
autonomous and Crusader-mode work, with the request's flow labels, in a repetitive mix as a
month of one owner's requests is.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import tempfile
import time
from pathlib import Path

from core.governance.decision import DecisionInputs
from core.governance.gateway import decision_receipt
from core.governance.policy import PolicyEngine
from core.governance.whatif import what_if
from core.receipts.history import stored_of_kind
from core.receipts.ledger import SqliteLedger
from core.tools.action import ToolAction
from core.tools.capability import CapabilityTokens
from soul import SHIPPED_VERSIONS_DIR, Soul, SoulStore

COMMANDS = (
    "ls -la /workspace", "cat notes.txt", "git status", "git log --oneline -5", "grep -r TODO .",
    "echo hi > a.txt", "mkdir build", "python3 -m pytest -q", "rm -rf /workspace/old",
    "mv a.txt b.txt", "git commit -am wip", "git push origin main", "curl https://example.org",
    "pip install requests", "make", "npm install", "find . -name '*.log' -delete", "rm -rf /",
    "chmod 600 key.pem", "tar czf backup.tgz notes", "sed -i s/a/b/ notes.txt", "du -sh .",
)  # fmt: skip
TOOLS = (
    ToolAction("file.read", None, {"path": "/workspace/notes.txt"}),
    ToolAction("file.list", None, {"path": "/workspace"}),
    ToolAction("file.write", None, {"path": "/workspace/a.md", "in_workspace": True}),
    ToolAction("file.delete", None, {"path": "/workspace/a.md", "in_workspace": True}),
    ToolAction("web.fetch", None, {"url": "https://example.org/page", "method": "GET"}),
    ToolAction("web.search", None, {"query": "weather"}),
    ToolAction("memory.remember", None, {"text": "likes tea"}),
)
EFFECTS = (("creates",), ("creates", "overwrites"), ("deletes",), ("moves",), ("git_refs_moved",))
FLOWS = ((), ("private",), ("stranger",), ("private", "stranger"))
ASK = "Because of what this request read: it changes a.md, which your message did not name."


def decisions(engine: PolicyEngine, count: int, seed: int = 35) -> list[tuple[ToolAction, object]]:
    """`count` decisions of the real engine, with what each read."""
    rng = random.Random(seed)
    made: list[tuple[ToolAction, object]] = []
    for _ in range(count):
        flow = ("owner", *rng.choice(FLOWS))
        autonomous = rng.random() < 0.1
        ask = ASK if "stranger" in flow and rng.random() < 0.3 else None
        roll = rng.random()
        if roll < 0.5:
            action = ToolAction("shell.exec", rng.choice(COMMANDS), {})
            made.append((action, engine.judge(action, autonomous=autonomous, ask=ask, flow=flow)))
        elif roll < 0.8:
            action = rng.choice(TOOLS)
            made.append((action, engine.judge(action, autonomous=autonomous, ask=ask, flow=flow)))
        else:
            command = ToolAction("shell.exec", rng.choice(COMMANDS[5:12]), {})
            apply = ToolAction("shell.apply", command.command, {"dry_run": str(rng.random())})
            judged = engine.judge(
                apply, effects=rng.choice(EFFECTS), command=command, autonomous=autonomous
            )
            made.append((apply, judged))
    return made


async def fill(path: Path, soul: Soul, count: int) -> None:
    """A ledger at `path` holding `count` policy_decision receipts."""
    crusader = random.Random(7)
    engine = PolicyEngine(
        lambda: soul, CapabilityTokens(b"x" * 32), lambda: crusader.random() < 0.2
    )
    async with SqliteLedger(path, batch_size=2000) as ledger:
        for i, (action, (decision, inputs)) in enumerate(decisions(engine, count)):
            assert isinstance(inputs, DecisionInputs)
            ledger.append(decision_receipt(action, decision, inputs=inputs))
            if i % 2000 == 1999:
                await ledger.flush()
        await ledger.flush()


def proposed(soul: Soul) -> Soul:
    """The shipped Soul asking before every new file and every unknown command."""
    rules = soul.risk_rules
    effects = rules.effects.model_copy(update={"creates": "T3"})
    changed = rules.model_copy(update={"effects": effects, "default_tier": "T3"})
    return soul.model_copy(update={"risk_rules": changed})


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--count", type=int, default=100_000)
    count = parser.parse_args().count
    with tempfile.TemporaryDirectory() as tmp:
        soul = SoulStore(SHIPPED_VERSIONS_DIR, Path(tmp)).load_active()
        path = Path(tmp) / "ledger.db"
        started = time.perf_counter()
        asyncio.run(fill(path, soul, count))
        print(f"filled {count:,} decisions in {time.perf_counter() - started:.1f} s")
        started = time.perf_counter()
        found = what_if(stored_of_kind(path, "policy_decision"), proposed(soul), 30)
        took = time.perf_counter() - started
    print(f"what-if over {found.decisions:,} recorded decisions: {took:.2f} s (target <= 10 s)")
    print(found.sentence())
    for name, tally in (
        ("would now ask", found.would_ask),
        ("would now run without asking", found.would_run),
        ("would now be refused", found.would_refuse),
    ):
        print(
            f"  {name}: {tally.count:,}, e.g. {tally.examples[0].describe() if tally.examples else '-'}"
        )


if __name__ == "__main__":
    main()
