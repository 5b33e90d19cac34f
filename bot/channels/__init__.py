"""The channels the owner talks through: one package each, listed in `bot/channels/registry.py`."""
