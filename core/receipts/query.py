"""SQL for receipt pages: filters and keyset paging, newest first."""

from __future__ import annotations

from core.receipts.base import ReceiptQuery
from core.receipts.kinds import Role
from core.receipts.registry import KINDS


def filters(query: ReceiptQuery) -> tuple[list[str], list[object]]:
    """WHERE terms for the action_type and status filters."""
    where: list[str] = []
    params: list[object] = []
    if query.action_type:
        where.append("action_type = ?")
        params.append(query.action_type)
    if query.status:
        where.append("status = ?")
        params.append(query.status)
    return where, params


def page_sql(query: ReceiptQuery, columns: str) -> tuple[str, list[object]]:
    """One newest-first page, asking for one row more than the limit to learn if more exist."""
    where, params = filters(query)
    if query.before_seq is not None:
        where.append("seq < ?")
        params.append(query.before_seq)
    clause = f" WHERE {' AND '.join(where)}" if where else ""
    params.append(query.limit + 1)
    return f"SELECT {columns} FROM receipts{clause} ORDER BY seq DESC LIMIT ?", params


# A story's root: a receipt that is no one's child and in no quest. Presses are left out:
# what a press decides is recorded in the quest it belongs to. (Kind names are lowercase
# words, checked by the registry: safe to spell in SQL.)
PRESSES = ", ".join(f"'{name}'" for name in KINDS.having(Role.PRESS))
ROOT_WHERE = f"parent_id IS NULL AND quest_id IS NULL AND action_type NOT IN ({PRESSES})"


def roots_sql(columns: str) -> str:
    """Story roots between two seqs (parameters: low, high, limit), newest first."""
    return (
        f"SELECT {columns} FROM receipts WHERE {ROOT_WHERE} AND seq BETWEEN ? AND ?"
        " ORDER BY seq DESC LIMIT ?"
    )


def members_sql(columns: str) -> str:
    """The first receipts of each quest in a JSON array of ids (parameters: the array, how
    many per quest), oldest first, each row followed by its quest's size."""
    return (
        f"SELECT * FROM (SELECT {columns}, count(*) OVER quest AS size,"
        " row_number() OVER (quest ORDER BY seq) AS n FROM receipts"
        " WHERE quest_id IN (SELECT value FROM json_each(?))"
        " WINDOW quest AS (PARTITION BY quest_id)) WHERE n <= ? ORDER BY seq"
    )


def undos_sql(columns: str) -> str:
    """Receipts of the kinds in a JSON array (the first parameter) that name, as their
    `change` input, one of the change ids in another (the second), oldest first. Read from
    the kinds' index: undos are few."""
    return (
        f"SELECT {columns} FROM receipts WHERE action_type IN (SELECT value FROM json_each(?))"
        " AND CASE WHEN json_valid(inputs) THEN json_extract(inputs, '$.change') END"
        " IN (SELECT value FROM json_each(?)) ORDER BY seq"
    )


def by_seqs_sql(columns: str) -> str:
    """Receipts whose seqs are in a JSON array (the one parameter), newest first. One
    parameter however many seqs: no host-parameter limit to meet."""
    return (
        f"SELECT {columns} FROM receipts WHERE seq IN (SELECT value FROM json_each(?)) "
        "ORDER BY seq DESC"
    )


def by_ids_sql(columns: str) -> str:
    """Receipts whose ids are in a JSON array (the one parameter)."""
    return f"SELECT {columns} FROM receipts WHERE id IN (SELECT value FROM json_each(?))"


def passing_sql(query: ReceiptQuery) -> str:
    """Which of the seqs in a JSON array (the first parameter) pass the filters; answered
    from the filter's own index, without reading the receipts."""
    where, _ = filters(query)
    where.insert(0, "seq IN (SELECT value FROM json_each(?))")
    return f"SELECT seq FROM receipts WHERE {' AND '.join(where)}"


def passing_range_sql(query: ReceiptQuery) -> str:
    """Seqs that pass the filters between two seqs (parameters: the filters', low, high and
    a row limit); read from the filter's index."""
    where, _ = filters(query)
    where.append("seq BETWEEN ? AND ?")
    return f"SELECT seq FROM receipts WHERE {' AND '.join(where)} LIMIT ?"
