"""The Google Chat channel: a verified app endpoint, cardsV2 with buttons, asynchronous push."""

from bot.channels.gchat.channel import GchatChannel
from bot.channels.gchat.endpoint import GchatEndpoint
from bot.channels.gchat.setup import attach_gchat, gchat_endpoint, gchat_wanted

__all__ = ["GchatChannel", "GchatEndpoint", "attach_gchat", "gchat_endpoint", "gchat_wanted"]
