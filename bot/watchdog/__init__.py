"""`lancelot watchdog`: a small separate process that tells the owner when Lancelot stops
beating (LANCELOT_HOME/heartbeat.json), and again when it is back. It holds only what it
needs to reach the owner and loads none of the app."""
