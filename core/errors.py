"""The error tree: every failure Lancelot reports is one of these, never a bare exception."""

from __future__ import annotations


class LancelotError(Exception):
    """Base of every error Lancelot raises on purpose.

    `user_message` is what the owner may see: short, no internals.
    """

    user_message = "Something went wrong; the details are in the log."

    def __init__(self, message: str = "", *, user_message: str | None = None) -> None:
        super().__init__(message or self.user_message)
        if user_message is not None:
            self.user_message = user_message


class TransientError(LancelotError):
    """May succeed if tried again later (network blips, 5xx, rate limits)."""


class PermanentError(LancelotError):
    """Will fail the same way again; do not retry."""


class ConfigError(PermanentError):
    """The settings are unusable. `str()` is one line naming file, key and problem."""


class StorageError(PermanentError):
    """A database or the data directory cannot be used."""

    user_message = "Lancelot's storage is unavailable right now."


class PolicyDenied(PermanentError):
    """Governance refused an action; carries the rule and safer alternatives."""

    def __init__(self, rule: str, alternatives: tuple[str, ...] = (), message: str = "") -> None:
        super().__init__(message or f"denied by rule {rule}")
        self.rule = rule
        self.alternatives = alternatives
        self.user_message = f"Not allowed ({rule})."


class InvalidToken(PermanentError):
    """An action token or link is forged, expired, used or bound elsewhere."""

    user_message = "That button or link is no longer valid."

    def __init__(self, reason: str) -> None:
        super().__init__(f"invalid token: {reason}")
        self.reason = reason


class ToolFailed(LancelotError):
    """A tool ran and failed."""


class NoToolAvailable(ToolFailed):
    """Every provider of a capability declined before doing anything; `reasons` holds
    (provider, why) for each, best provider first."""

    def __init__(self, capability: str, reasons: tuple[tuple[str, str], ...]) -> None:
        said = "; ".join(f"{name}: {why}" for name, why in reasons)
        super().__init__(f"no provider of {capability} is available ({said})")
        self.capability = capability
        self.reasons = reasons


class ToolUnavailable(TransientError):
    """A tool provider cannot serve right now (engine down, feature off); another may."""


class ProviderUnavailable(TransientError):
    """A model provider could not be reached or kept failing."""

    user_message = "The model provider is unavailable right now."


class DeliveryFailed(TransientError):
    """A channel could not deliver a card."""


class DeliveryDeferred(DeliveryFailed):
    """Not delivered yet, but queued durably: the outbox keeps trying and nothing is lost."""


class RateLimited(TransientError):
    """The platform asked to wait `retry_after` seconds before the next try (HTTP 429)."""

    def __init__(self, retry_after: float, message: str = "") -> None:
        super().__init__(message or f"rate limited; retry after {retry_after:g} s")
        self.retry_after = retry_after


class DeliveryRejected(PermanentError):
    """The platform refused a card for good (the bot was blocked, the request was bad)."""
