"""Input and secret hygiene: sanitizer, rate limits, redaction, signed tokens."""
