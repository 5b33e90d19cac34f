"""Lancelot's test suite; `python -m tests` runs every check."""
