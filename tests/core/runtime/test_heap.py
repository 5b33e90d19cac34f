"""The start-up heap is frozen: a full collection no longer walks it."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Iterator

import pytest

from core.runtime.heap import YOUNG_OBJECTS, freeze_startup_heap


@pytest.fixture
def unfrozen() -> Iterator[None]:
    paced = gc.get_threshold()
    yield
    gc.unfreeze()
    gc.set_threshold(*paced)


def _visited(obj: object) -> bool:
    return any(o is obj for o in gc.get_objects())


def test_what_exists_at_the_freeze_is_out_of_the_collectors_reach(unfrozen: None) -> None:
    kept = [object() for _ in range(3)]
    assert _visited(kept)
    frozen = freeze_startup_heap()
    assert frozen == gc.get_freeze_count() > 0
    assert not _visited(kept)
    later = [object()]
    assert _visited(later)  # what is made afterwards is collected as usual


def test_garbage_left_by_start_is_collected_not_frozen(unfrozen: None) -> None:
    class Node:
        pass

    node = Node()
    node.self = node  # type: ignore[attr-defined]  # a cycle only the collector frees
    alive = weakref.ref(node)
    del node
    freeze_startup_heap()
    assert alive() is None


def test_a_burst_of_new_objects_costs_no_collection_after_start(unfrozen: None) -> None:
    young: list[int] = []

    def count(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            young.append(info["generation"])

    freeze_startup_heap()
    gc.callbacks.append(count)
    try:
        made = [[n] for n in range(YOUNG_OBJECTS // 2)]  # what a few hundred messages make
    finally:
        gc.callbacks.remove(count)
    assert len(made) == YOUNG_OBJECTS // 2
    assert young == []  # CPython's default pace would have collected a dozen times
