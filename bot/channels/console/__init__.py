"""The console channel: Lancelot in a terminal; its descriptor is
`bot.channels.console.spec.CONSOLE`."""
