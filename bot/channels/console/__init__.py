"""The console channel: Lancelot in a terminal."""
