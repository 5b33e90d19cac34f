"""Digests: what happened since the last one, as a card delivered once."""
