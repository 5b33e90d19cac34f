"""Health: the snapshot, its checks, alerts with their state, and the /health card."""
