"""How Lancelot runs in the background: one backoff formula, one supervisor of tasks."""
