"""The same assembled Lancelot and phone as the skills machinery tests."""

from __future__ import annotations

from tests.core.skills.conftest import app, phone, settings

__all__ = ["app", "phone", "settings"]
