"""The ledger's SQL: table, indexes, full-text index, and the append-only triggers."""

from core.storage.versions import Schema

# Beyond what every writing connection gets (core/storage/connections.py): checkpoints
# left to the writer (CHECKPOINT_EVERY batches), and no foreign keys to check.
PRAGMAS = ("PRAGMA wal_autocheckpoint=8000", "PRAGMA foreign_keys=OFF")

# ledger.db has one owner, the ledger: its version is the file's PRAGMA user_version.
SCHEMA = Schema(
    "ledger",
    (
        """
CREATE TABLE IF NOT EXISTS receipts (
    seq INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    timestamp TEXT NOT NULL,
    action_type TEXT NOT NULL,
    action_name TEXT NOT NULL,
    inputs TEXT NOT NULL,
    outputs TEXT NOT NULL,
    status TEXT NOT NULL,
    duration_ms REAL,
    token_count INTEGER,
    cognition_tier TEXT,
    parent_id TEXT,
    quest_id TEXT,
    error_message TEXT,
    metadata TEXT NOT NULL,
    prev_hash TEXT NOT NULL,
    hash TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS receipts_by_type ON receipts(action_type, seq);
CREATE INDEX IF NOT EXISTS receipts_by_status ON receipts(status, seq);
CREATE INDEX IF NOT EXISTS receipts_by_type_status ON receipts(action_type, status, seq);
CREATE INDEX IF NOT EXISTS receipts_by_parent ON receipts(parent_id) WHERE parent_id IS NOT NULL;
CREATE INDEX IF NOT EXISTS receipts_by_quest ON receipts(quest_id) WHERE quest_id IS NOT NULL;

CREATE TRIGGER IF NOT EXISTS receipts_no_update BEFORE UPDATE ON receipts BEGIN
    SELECT RAISE(ABORT, 'receipts are append-only: UPDATE is not allowed');
END;
CREATE TRIGGER IF NOT EXISTS receipts_no_delete BEFORE DELETE ON receipts BEGIN
    SELECT RAISE(ABORT, 'receipts are append-only: DELETE is not allowed');
END;
""",
    ),
)

COLUMNS = (
    "seq, id, timestamp, action_type, action_name, inputs, outputs, status, duration_ms,"
    " token_count, cognition_tier, parent_id, quest_id, error_message, metadata, prev_hash, hash"
)

_ROW = f"({', '.join('?' * 17)})"
# Receipts per INSERT statement. sqlite3 lets go of the GIL for each statement it steps, and
# a thread that lets go while the event loop is busy waits up to sys.getswitchinterval()
# (5 ms) to get it back: one row per statement would let the writer crawl.
ROWS_PER_INSERT = 128


def insert_rows(count: int) -> str:
    """An INSERT of `count` receipts in one statement."""
    return f"INSERT INTO receipts ({COLUMNS}) VALUES {', '.join([_ROW] * count)}"


SEARCH_SCHEMA = """
CREATE VIRTUAL TABLE IF NOT EXISTS receipts_fts USING fts5(
    body, content='', detail=column, tokenize='unicode61 remove_diacritics 2'
);
"""

SEARCH_TEXT_LIMIT = 2000

# ledger-search.db is derived from the ledger: a file this code cannot read (or a newer one)
# is rebuilt from the receipts rather than refused.
SEARCH = Schema("search", (SEARCH_SCHEMA,))
