"""Skills: one folder each, a skill.yaml manifest and its code."""
