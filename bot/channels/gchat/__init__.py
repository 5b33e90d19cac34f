"""The Google Chat channel: a verified app endpoint, cardsV2 with buttons, asynchronous push;
its descriptor is `bot.channels.gchat.spec.GCHAT`."""

NAME = "gchat"  # the channel's name on the bus, in receipts and in owners.json
