"""Mutation testing of chosen files: `python -m tests.mutation core/security`."""
