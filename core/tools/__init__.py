"""The tool fabric: what the agent's hands can do, each call governed."""
