"""Lancelot's edges: the CLI, the composition root, channels and the web app."""
