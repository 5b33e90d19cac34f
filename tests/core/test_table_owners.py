"""Each table has one owner: only its module names it in SQL, and every table has an owner.

Anyone else asks the owner through a typed method (OutboxStore.failing, ApprovalStore.count,
ViewerAccess.revoke_unopened, ...). The scan reads the SQL in the string literals of core/,
bot/ and skills/ for a table named after FROM, JOIN, INTO, UPDATE or TABLE.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SCANNED = ("core", "bot", "skills")

# table -> the module (or package, ending in /) that alone reads and writes it
OWNERS = {
    "schema_versions": "core/storage/versions.py",
    "action_tokens": "core/security/tokens.py",
    "viewer_links": "core/security/viewer_access.py",
    "outbox": "core/delivery/store.py",
    "inbox": "core/delivery/inbox.py",
    "approvals": "core/governance/approvals.py",
    "approval_copies": "core/governance/approvals.py",
    "approval_reminders": "core/governance/approvals.py",
    "crusader": "core/governance/crusader.py",
    "llm_usage": "core/llm/usage.py",
    "llm_spend": "core/llm/spend.py",
    "llm_budget_marks": "core/llm/spend.py",
    "skills": "core/skills/registry.py",
    "skill_proposals": "core/skills/proposals.py",
    "health_alert_state": "core/health/alert_state.py",
    "onboarding": "core/onboarding/store.py",
    "scheduler_jobs": "core/scheduler/store.py",
    "scheduler_runs": "core/scheduler/store.py",
    "scheduler_marks": "core/scheduler/store.py",
    "scheduler_chat_jobs": "core/scheduler/store.py",
    "receipts": "core/receipts/",  # ledger.db: the ledger's writer, reader, queries, schema
    "receipts_fts": "core/receipts/",  # ledger-search.db, derived from the ledger
    "probe": "core/receipts/",  # an in-memory FTS5 table that checks a search's syntax
    "dry_runs": "core/tools/effects/journal.py",  # effects.db: kept dry runs
    "changes": "core/tools/effects/journal.py",  # applied changes, for Undo
    "change_objects": "core/tools/effects/journal.py",  # the backups each change holds
    "memory_changes": "core/memory/",  # memory.db
    "memory_chats": "core/memory/",  # memory.db
    "memory_commits": "core/memory/",  # memory.db
    "memory_experiences": "core/memory/",  # memory.db
    "memory_experiences_fts": "core/memory/",  # memory.db
    "memory_items": "core/memory/",  # memory.db
    "memory_items_fts": "core/memory/",  # memory.db
    "memory_quarantine": "core/memory/",  # memory.db
    "memory_summaries": "core/memory/",  # memory.db
    "memory_tasks": "core/memory/",  # memory.db
    "memory_turns": "core/memory/",  # memory.db
    "memory_turns_fts": "core/memory/",  # memory.db
    "memory_used": "core/memory/",  # memory.db
}

_SQL = re.compile(r"\b(?:SELECT|INSERT|UPDATE|DELETE|REPLACE|CREATE|ALTER|DROP)\b")
_NAMED = re.compile(
    r"\b(?:FROM|JOIN|INTO|UPDATE|TABLE(?:\s+IF\s+NOT\s+EXISTS)?)\s+([A-Za-z_]\w*)", re.IGNORECASE
)
_CREATED = re.compile(
    r"\bCREATE\s+(?:VIRTUAL\s+)?TABLE\s+(?:IF\s+NOT\s+EXISTS\s+)?([A-Za-z_]\w*)", re.IGNORECASE
)


def _sql(path: Path) -> Iterator[tuple[int, str]]:
    """(line, text) of every string literal in a module that reads as SQL (an upper-case
    statement keyword in it; an f-string's literal parts joined), docstrings aside."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skip = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                skip.add(id(body[0].value))
        if isinstance(node, ast.JoinedStr):
            skip.update(id(part) for part in node.values)
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in skip:
            text = node.value
        elif isinstance(node, ast.JoinedStr):
            text = "{}".join(
                str(part.value) if isinstance(part, ast.Constant) else "" for part in node.values
            )
        else:
            continue
        if _SQL.search(text):
            yield node.lineno, text


def _sources() -> Iterator[tuple[str, Path]]:
    for top in SCANNED:
        for path in sorted((REPO / top).rglob("*.py")):
            yield path.relative_to(REPO).as_posix(), path


def _owns(owner: str, module: str) -> bool:
    return module.startswith(owner) if owner.endswith("/") else module == owner


def test_only_the_owner_names_its_table_in_sql() -> None:
    strays = [
        f"{module}:{line} names {table} (owned by {OWNERS[table]})"
        for module, path in _sources()
        for line, text in _sql(path)
        for table in _NAMED.findall(text)
        if table in OWNERS and not _owns(OWNERS[table], module)
    ]
    assert strays == [], "ask the owner through a method instead:\n" + "\n".join(strays)


def test_every_table_has_an_owner_that_creates_it() -> None:
    created = {
        table: module
        for module, path in _sources()
        for _, text in _sql(path)
        for table in _CREATED.findall(text)
    }
    unowned = sorted(set(created) - set(OWNERS))
    assert unowned == [], f"add these tables to OWNERS: {unowned}"
    elsewhere = {t: m for t, m in created.items() if not _owns(OWNERS[t], m)}
    assert elsewhere == {}
    assert sorted(created) == sorted(OWNERS)  # no owner listed for a table nobody makes


def test_the_scan_sees_sql_written_the_usual_ways(tmp_path: Path) -> None:
    module = tmp_path / "module.py"
    module.write_text(
        '''"""Reads from receipts (prose, not SQL)."""
Q = "SELECT COUNT(*) FROM outbox WHERE x"
R = f"DELETE FROM {'viewer_links'} WHERE used_at IS NULL"
S = ("UPDATE approvals SET state = ?"
     " WHERE id = ?")
T = f"SELECT {Q} FROM skills"
U = "INSERT INTO crusader VALUES (1, 0)"
V = "Sent from approvals, answers from receipts"
'''
    )
    found = [table for _, text in _sql(module) for table in _NAMED.findall(text)]
    assert sorted(found) == ["approvals", "crusader", "outbox", "skills"]
