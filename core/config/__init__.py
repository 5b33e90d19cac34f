"""Settings: config/lancelot.yaml plus environment overrides, validated with pydantic."""

from core.config.loader import load_settings, unknown_environment
from core.config.settings import Settings

__all__ = ["Settings", "load_settings", "unknown_environment"]
