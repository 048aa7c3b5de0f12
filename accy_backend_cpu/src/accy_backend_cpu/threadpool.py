"""A persistent pool that runs ranges of work-groups on worker threads.

ctypes releases the GIL while a kernel runs, so threads execute kernels in parallel. The
calling thread runs the first range itself; small launches never touch the pool.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # concurrent.futures (and logging) load when a launch first needs threads
    from concurrent.futures import Future, ThreadPoolExecutor

__all__ = ["WorkgroupPool", "split_range"]


def split_range(total: int, parts: int) -> list[tuple[int, int]]:
    """Split ``[0, total)`` into at most ``parts`` contiguous, nearly equal ranges."""
    parts = max(1, min(parts, total))
    base, extra = divmod(total, parts)
    out, start = [], 0
    for i in range(parts):
        stop = start + base + (1 if i < extra else 0)
        out.append((start, stop))
        start = stop
    return out


class WorkgroupPool:
    """Run ``fn(begin, end)`` over ``[0, groups)`` split across ``num_threads`` threads.

    Args:
        num_threads: threads including the caller (>= 1).
        min_items_per_thread: launches with fewer work-items per thread run inline.
    """

    def __init__(self, num_threads: int, min_items_per_thread: int = 16384) -> None:
        self.num_threads = max(1, num_threads)
        self.min_items_per_thread = min_items_per_thread
        self._executor: ThreadPoolExecutor | None = None
        self._lock = threading.Lock()

    def _pool(self) -> ThreadPoolExecutor:
        from concurrent.futures import ThreadPoolExecutor

        with self._lock:
            if self._executor is None:
                self._executor = ThreadPoolExecutor(
                    self.num_threads - 1, thread_name_prefix="accy-cpu"
                )
            return self._executor

    def _parts(self, groups: int, items_per_group: int) -> int:
        useful = (groups * items_per_group) // self.min_items_per_thread
        return min(self.num_threads, groups, max(1, useful))

    def parallel(self, groups: int, items_per_group: int) -> bool:
        """Whether :meth:`run` would split this launch over threads (False: it runs inline)."""
        return self._parts(groups, items_per_group) > 1

    def run(self, fn: Callable[[int, int], None], groups: int, items_per_group: int) -> None:
        """Call ``fn`` on ranges covering ``[0, groups)``; re-raise the first failure.

        ``items_per_group`` is the work of one group (work-items, or work-items times their
        loop iterations): a launch of less than ``min_items_per_thread`` per thread runs
        with fewer threads.
        """
        parts = self._parts(groups, items_per_group)
        if parts <= 1:
            fn(0, groups)
            return
        ranges = split_range(groups, parts)
        futures: list[Future[None]] = []
        try:
            pool = self._pool()
            for b, e in ranges[1:]:
                futures.append(pool.submit(fn, b, e))
        except RuntimeError:  # shut down by another thread meanwhile: the rest runs here
            inline = ranges[1 + len(futures):]
        else:
            inline = []
        fn(*ranges[0])
        for b, e in inline:
            fn(b, e)
        for f in futures:
            f.result()

    def shutdown(self) -> None:
        """Stop the worker threads (a later ``run`` starts new ones)."""
        with self._lock:
            if self._executor is not None:
                self._executor.shutdown(wait=True)
                self._executor = None
