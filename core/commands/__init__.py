"""Chat commands: the registry the orchestrator dispatches through, and the basic commands."""
