"""Fake peers and in-memory channels for tests."""
