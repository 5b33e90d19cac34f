"""memory.db's tables (owned by core/memory/ alone) and their schema version."""

from __future__ import annotations

import aiosqlite

from core.storage.versions import Schema

_TABLES = """
CREATE TABLE IF NOT EXISTS memory_chats (
    chat TEXT PRIMARY KEY,
    conversation INTEGER NOT NULL,
    started_at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS memory_turns (
    n INTEGER PRIMARY KEY,
    chat TEXT NOT NULL,
    conversation INTEGER NOT NULL,
    role TEXT NOT NULL,
    text TEXT NOT NULL,
    receipt_id TEXT,
    at REAL NOT NULL,
    summarised INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS memory_turns_by_chat ON memory_turns(chat, conversation, n);
CREATE INDEX IF NOT EXISTS memory_turns_unsummarised
    ON memory_turns(chat, conversation, summarised, n);
CREATE TABLE IF NOT EXISTS memory_summaries (
    n INTEGER PRIMARY KEY,
    chat TEXT NOT NULL,
    conversation INTEGER NOT NULL,
    text TEXT NOT NULL,
    first_turn INTEGER NOT NULL,
    last_turn INTEGER NOT NULL,
    at REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS memory_summaries_by_chat ON memory_summaries(chat, conversation, n);
CREATE TABLE IF NOT EXISTS memory_items (
    n INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    tier TEXT NOT NULL,
    block TEXT,
    chat TEXT,
    conversation INTEGER,
    text TEXT NOT NULL,
    provenance TEXT NOT NULL,
    source TEXT,
    created_at REAL NOT NULL,
    updated_at REAL NOT NULL,
    version INTEGER NOT NULL,
    commit_id TEXT NOT NULL
);
CREATE UNIQUE INDEX IF NOT EXISTS memory_items_by_block ON memory_items(block)
    WHERE block IS NOT NULL;
CREATE INDEX IF NOT EXISTS memory_items_by_tier ON memory_items(tier, chat, conversation);
CREATE TABLE IF NOT EXISTS memory_commits (
    n INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    at REAL NOT NULL,
    provenance TEXT NOT NULL,
    reason TEXT NOT NULL,
    undo_of TEXT,
    undone_by TEXT,
    quarantine_id TEXT
);
CREATE TABLE IF NOT EXISTS memory_changes (
    commit_n INTEGER NOT NULL,
    pos INTEGER NOT NULL,
    op TEXT NOT NULL,
    item_id TEXT NOT NULL,
    before TEXT,
    after TEXT,
    PRIMARY KEY (commit_n, pos)
);
CREATE INDEX IF NOT EXISTS memory_changes_by_item ON memory_changes(item_id);
CREATE TABLE IF NOT EXISTS memory_quarantine (
    n INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    at REAL NOT NULL,
    provenance TEXT NOT NULL,
    reason TEXT NOT NULL,
    why TEXT NOT NULL,
    ops TEXT NOT NULL,
    state TEXT NOT NULL DEFAULT 'pending',
    decided_at REAL,
    commit_id TEXT
);
CREATE INDEX IF NOT EXISTS memory_quarantine_by_state ON memory_quarantine(state, n);
CREATE TABLE IF NOT EXISTS memory_tasks (
    chat TEXT PRIMARY KEY,
    request TEXT NOT NULL,
    plan TEXT NOT NULL,
    steps TEXT NOT NULL,
    approval_id TEXT,
    quest_id TEXT,
    started_at REAL NOT NULL,
    updated_at REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS memory_tasks_by_approval ON memory_tasks(approval_id)
    WHERE approval_id IS NOT NULL;
CREATE TABLE IF NOT EXISTS memory_experiences (
    n INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    request TEXT NOT NULL,
    plan TEXT NOT NULL,
    gaps TEXT NOT NULL,
    actions TEXT NOT NULL,
    outcome TEXT NOT NULL,
    duration_ms REAL NOT NULL,
    at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS memory_used (
    id TEXT PRIMARY KEY,
    at REAL NOT NULL
) WITHOUT ROWID;
"""

# Full-text indexes over the tables above (external content: the text is stored once), kept
# in step by triggers. porter: "files" finds "file".
_SEARCH = """
CREATE VIRTUAL TABLE IF NOT EXISTS memory_items_fts USING fts5(
    text, content='memory_items', content_rowid='n', tokenize='porter unicode61'
);
CREATE TRIGGER IF NOT EXISTS memory_items_ai AFTER INSERT ON memory_items BEGIN
    INSERT INTO memory_items_fts(rowid, text) VALUES (new.n, new.text);
END;
CREATE TRIGGER IF NOT EXISTS memory_items_ad AFTER DELETE ON memory_items BEGIN
    INSERT INTO memory_items_fts(memory_items_fts, rowid, text) VALUES ('delete', old.n, old.text);
END;
CREATE TRIGGER IF NOT EXISTS memory_items_au AFTER UPDATE OF text ON memory_items BEGIN
    INSERT INTO memory_items_fts(memory_items_fts, rowid, text) VALUES ('delete', old.n, old.text);
    INSERT INTO memory_items_fts(rowid, text) VALUES (new.n, new.text);
END;
CREATE VIRTUAL TABLE IF NOT EXISTS memory_turns_fts USING fts5(
    text, content='memory_turns', content_rowid='n', tokenize='porter unicode61'
);
CREATE TRIGGER IF NOT EXISTS memory_turns_ai AFTER INSERT ON memory_turns BEGIN
    INSERT INTO memory_turns_fts(rowid, text) VALUES (new.n, new.text);
END;
CREATE TRIGGER IF NOT EXISTS memory_turns_ad AFTER DELETE ON memory_turns BEGIN
    INSERT INTO memory_turns_fts(memory_turns_fts, rowid, text) VALUES ('delete', old.n, old.text);
END;
CREATE VIRTUAL TABLE IF NOT EXISTS memory_experiences_fts USING fts5(
    request, plan, outcome, content='memory_experiences', content_rowid='n',
    tokenize='porter unicode61'
);
CREATE TRIGGER IF NOT EXISTS memory_experiences_ai AFTER INSERT ON memory_experiences BEGIN
    INSERT INTO memory_experiences_fts(rowid, request, plan, outcome)
        VALUES (new.n, new.request, new.plan, new.outcome);
END;
CREATE TRIGGER IF NOT EXISTS memory_experiences_ad AFTER DELETE ON memory_experiences BEGIN
    INSERT INTO memory_experiences_fts(memory_experiences_fts, rowid, request, plan, outcome)
        VALUES ('delete', old.n, old.request, old.plan, old.outcome);
END;
"""


async def _add_labels(db: aiosqlite.Connection) -> None:
    """Step 2: where a turn's (and a summary's) words came from; "strangers": said after
    the request read a page, a file or a voice note, so the next request is told so.
    Columns already there (a home stamped from before versions) are left as they are."""
    for table in ("memory_turns", "memory_summaries"):
        async with db.execute(f"PRAGMA table_info({table})") as cur:
            present = {row[1] for row in await cur.fetchall()}
        if "label" not in present:
            await db.execute(f"ALTER TABLE {table} ADD COLUMN label TEXT NOT NULL DEFAULT ''")


SCHEMA = Schema("memory", (_TABLES + _SEARCH, _add_labels))
"""memory.db's one owner; its version is the file's PRAGMA user_version."""
