"""SQL for receipt pages: filters and keyset paging, newest first."""

from __future__ import annotations

from core.receipts.base import ReceiptQuery


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


def by_seqs_sql(query: ReceiptQuery, columns: str, count: int) -> str:
    """Receipts among `count` given seqs that pass the filters, newest first."""
    where, _ = filters(query)
    where.insert(0, f"seq IN ({', '.join('?' * count)})")
    return f"SELECT {columns} FROM receipts WHERE {' AND '.join(where)} ORDER BY seq DESC"
