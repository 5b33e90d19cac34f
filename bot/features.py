"""Wires /features (the FEATURE_* switches and their toggles) onto the kernel."""

from __future__ import annotations

from bot.kernel import Kernel
from core.governance.switches import FeatureCommands


def wire_features(app: Kernel) -> None:
    """Register /features. It works whatever else is switched off (FEATURE_SOUL too), so a
    switch turned off from chat can be turned on again from chat."""
    FeatureCommands(app.commands, app.features, app.tokens, app.ledger).register()
