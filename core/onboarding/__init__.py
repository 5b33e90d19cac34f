"""Onboarding in chat: the first conversation with a new owner (name, model provider,
timezone, channels), persisted in state.db."""

from core.onboarding.cards import ChannelNote
from core.onboarding.conversation import Onboarding, Seams
from core.onboarding.progress import Progress, Status, Step
from core.onboarding.store import OnboardingStore

__all__ = ["ChannelNote", "Onboarding", "OnboardingStore", "Progress", "Seams", "Status", "Step"]
