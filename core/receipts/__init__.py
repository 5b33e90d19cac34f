"""The receipt ledger: append-only, hash-chained records of everything Lancelot does."""

from core.receipts.base import ReceiptPage, ReceiptQuery, ReceiptStore, VerifyReport
from core.receipts.model import Receipt, ReceiptStatus

__all__ = [
    "Receipt",
    "ReceiptPage",
    "ReceiptQuery",
    "ReceiptStatus",
    "ReceiptStore",
    "VerifyReport",
]
