"""Families size the idle lanes of their few-heavy-work-item launches by the CPU pool's own
split threshold (``accy.families.split_items``: the pool's ``min_items_per_thread``; times
its threads: ``split_lanes``), not by a constant of their own: the tile gather's launch
follows the pool's setting."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
from accy.families import split_items, split_lanes, tile_geometry
from accy.families.runner import SPLIT_ITEMS, capture_plans
from accy.plugins import open_backend

import accy_kernels as ak


def _gather_items(src: np.ndarray, idx: np.ndarray) -> int:
    with capture_plans() as runs:
        np.testing.assert_array_equal(ak.gather(src, idx, backend="cpu"), np.take(src, idx))
    (run,) = runs
    (ln,) = run.graph.launches
    return ln.groups * ln.workgroup_size


def test_split_items_is_the_pools_threshold(monkeypatch):
    be = open_backend("cpu")
    assert split_items(be) == split_items("cpu") == be.pool.min_items_per_thread
    assert split_items(SimpleNamespace()) == SPLIT_ITEMS  # no pool: the CPU pool's default
    src = np.arange(1000, dtype=np.float32)
    idx = np.random.default_rng(1).integers(0, 1000, 1 << 17).astype(np.int32)
    threads = be.pool.num_threads
    for per in (4096, 32768):
        monkeypatch.setattr(be.pool, "min_items_per_thread", per)
        assert split_items(be) == per and split_lanes(be) == per * threads
        assert tile_geometry(be, 3, 64)[1] == -(-per * threads // 3)  # tiles' lane stride
        items = _gather_items(src, idx)
        # enough lanes for every thread's share, and not twice that
        assert per * threads <= items < 2 * per * threads + 4 * threads * 64
