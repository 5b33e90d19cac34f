"""The service_runner skill (SYSTEM)."""
