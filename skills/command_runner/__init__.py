"""The command_runner skill (SYSTEM)."""
