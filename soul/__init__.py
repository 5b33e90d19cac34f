"""The constitution: versioned YAML, its schema, linter and amendments."""
