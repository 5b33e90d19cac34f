"""The heap of a long-running process: what is made at start lives until the end.

Lancelot builds a few hundred thousand objects while it starts (modules, settings, the Soul,
the HTTP clients) and keeps them all. Left to the garbage collector, every full collection
walks them again, a pause of about 150 ms on a busy machine every few thousand messages.
Frozen once start is done, they are out of its reach; objects made later are collected as
usual. (CPython's gc.freeze, the way forking servers keep their start-up heap out of the
collector.)"""

from __future__ import annotations

import gc
import logging

log = logging.getLogger(__name__)


def freeze_startup_heap() -> int:
    """Collect what start left behind, then freeze the rest; returns how many objects the
    collector no longer visits."""
    gc.collect()
    gc.freeze()
    frozen = gc.get_freeze_count()
    log.info("start-up heap frozen: %d objects out of the collector's way", frozen)
    return frozen
