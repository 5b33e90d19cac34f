"""Delivery: the outbox, its store, per-chat pacing and the retry policy."""
