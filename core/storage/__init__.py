"""The storage engine: every SQLite file is opened, versioned and written through here."""
