"""The network_client skill (SYSTEM)."""
