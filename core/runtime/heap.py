"""The heap of a long-running process: what is made at start lives until the end.

Lancelot builds a few hundred thousand objects while it starts (modules, settings, the Soul,
the HTTP clients) and keeps them all. Left to the garbage collector, every full collection
walks them again, a pause of about 150 ms on a busy machine every few thousand messages.
Frozen once start is done, they are out of its reach; objects made later are collected as
usual. (CPython's gc.freeze, the way forking servers keep their start-up heap out of the
collector.)

After start, what a message makes is freed by reference counting as soon as it is answered:
a young collection every 700 new objects (CPython's default) found nothing to collect in a
burst of 1,200 messages yet took about a tenth of the process's CPU. The young generation is
let grow to YOUNG_OBJECTS first; a cycle (an exception that holds its frame, say) still goes
at the next collection, a bounded wait."""

from __future__ import annotations

import gc
import logging

log = logging.getLogger(__name__)

YOUNG_OBJECTS = 20_000  # new objects between young collections (CPython: 700)
OLDER_EVERY = 20  # collections of a generation between collections of the next (CPython: 10)


def freeze_startup_heap() -> int:
    """Collect what start left behind, then freeze the rest and space the collections out
    (YOUNG_OBJECTS); returns how many objects the collector no longer visits."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(YOUNG_OBJECTS, OLDER_EVERY, OLDER_EVERY)
    frozen = gc.get_freeze_count()
    log.info("start-up heap frozen: %d objects out of the collector's way", frozen)
    return frozen
