"""The repo_writer skill (SYSTEM)."""
