"""The CPU backend's work-group pool: a split launch's ranges are claimed by whichever
thread is free, each run once; the caller never waits for a worker that has not started;
the first failure is re-raised."""

from __future__ import annotations

import threading

import pytest

pytest.importorskip("accy_backend_cpu")

from accy_backend_cpu.threadpool import WorkgroupPool  # noqa: E402


def _recorder():
    seen: list[tuple[int, int]] = []
    lock = threading.Lock()

    def fn(begin: int, end: int) -> None:
        with lock:
            seen.append((begin, end))
    return seen, fn


def test_ranges_cover_every_group_once():
    pool = WorkgroupPool(3, min_items_per_thread=1)
    try:
        for groups in (1, 2, 5, 6, 7, 100):
            seen, fn = _recorder()
            pool.run(fn, groups, 1)
            covered = sorted(g for b, e in seen for g in range(b, e))
            assert covered == list(range(groups)), groups
            assert len(seen) <= 3 * pool.ranges_per_thread
    finally:
        pool.shutdown()


def test_caller_runs_the_ranges_of_a_worker_that_does_not_start():
    """The only worker is busy with another task: the caller claims every range and
    returns while that task still runs (it used to wait for the worker's part)."""
    pool = WorkgroupPool(2, min_items_per_thread=1)
    release = threading.Event()
    try:
        blocker = pool._pool().submit(release.wait, 30)
        seen, fn = _recorder()
        pool.run(fn, 64, 1)
        assert not blocker.done()
        assert sorted(g for b, e in seen for g in range(b, e)) == list(range(64))
    finally:
        release.set()
        pool.shutdown()


def test_first_failure_is_raised():
    pool = WorkgroupPool(2, min_items_per_thread=1)
    try:
        def fn(begin: int, end: int) -> None:
            if begin == 0:
                raise ValueError("range 0 failed")
        with pytest.raises(ValueError, match="range 0"):
            pool.run(fn, 8, 1)
        seen, ok = _recorder()
        pool.run(ok, 8, 1)  # the pool still works
        assert sorted(g for b, e in seen for g in range(b, e)) == list(range(8))
    finally:
        pool.shutdown()
