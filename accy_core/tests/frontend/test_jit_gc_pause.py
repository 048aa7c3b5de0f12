"""The jit index path pauses the cyclic collector and leaves what it allocated in the oldest
generation: no young collection over it afterwards, nothing exempt from collection, and a
process's own frozen objects left frozen."""

from __future__ import annotations

import gc
import weakref

from accy.frontend.jit import _gc_paused


class _Node:
    pass


def _cycle() -> weakref.ref:
    a, b = _Node(), _Node()
    a.other, b.other = b, a
    return weakref.ref(a)


def test_the_block_leaves_no_young_collection_due_and_nothing_uncollectable():
    assert gc.isenabled()
    before = _cycle()  # young cyclic garbage from before the block
    with _gc_paused():
        assert not gc.isenabled()
        kept = [[i] for i in range(5000)]  # far past the young threshold
        during = _cycle()
    assert gc.isenabled() and gc.get_freeze_count() == 0
    assert gc.get_count()[0] < gc.get_threshold()[0]  # no young collection due now
    runs: list[int] = []
    gc.callbacks.append(lambda phase, info: runs.append(info["generation"]))
    try:
        after = [[i] for i in range(100)]  # a few allocations: no collection starts
    finally:
        gc.callbacks.pop()
    assert not runs and len(after) == 100
    assert before() is not None and during() is not None  # not collected yet, and
    gc.collect()
    assert before() is None and during() is None  # nothing exempt from a full collection
    assert len(kept) == 5000


def test_objects_the_process_froze_stay_frozen():
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        assert frozen > 0
        with _gc_paused():
            pass
        assert gc.get_freeze_count() == frozen
    finally:
        gc.unfreeze()


def test_a_disabled_collector_stays_disabled():
    gc.disable()
    try:
        with _gc_paused():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()
