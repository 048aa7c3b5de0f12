"""A persistent pool that runs ranges of work-groups on worker threads.

A split launch is cut into :data:`RANGES_PER_THREAD` contiguous ranges per thread, which the
calling thread and the workers claim in order until none is left: a thread that starts late
(a worker's wake-up) or runs slowly (a core shared with another process) leaves its ranges
to the others instead of holding the launch up, and the caller never waits for a worker
that has not started. Small launches never touch the pool.

Kernel launches (:meth:`WorkgroupPool.run_kernel`, :meth:`WorkgroupPool.bind_kernel`) run
on native workers (:mod:`accy_backend_cpu.native_pool`): threads that wait for a job in
native code and call the kernel themselves, so a range never returns to Python. A no-op
split launch (64 groups, 2 threads, a bound launch's ``run()``; ``bench/pool.py``)
round-trips in 1.4-2.1 us on the 2-core machine at load 1.3, 1.1-2.9 us at load 4-7 (the
Python pool below: ~14 us idle, 58-165 us at load 1.3-7); the inline launch it competes
with costs 0.5-1.0 us (0.7-1.8 under load).

Python callables (:meth:`WorkgroupPool.run`), and kernels where native calls are unavailable,
run on Python workers (``concurrent.futures``; ctypes releases the GIL while a kernel runs)
claiming ranges from :class:`_Claims`.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from accy.errors import AccyError

if TYPE_CHECKING:  # concurrent.futures (and logging) load when a launch first needs threads
    from concurrent.futures import ThreadPoolExecutor

__all__ = ["MIN_ITEMS_PER_THREAD", "RANGES_PER_THREAD", "WorkgroupPool", "split_range"]

#: ranges per thread of a split launch (claimed by whichever thread is free). Measured on
#: the 2-core machine under load (a 64x1024 @ 1024x1024 f32 product, 2 equal halves): the
#: caller's half took 1.6-2.0 ms while the worker's took 0.85 ms, its core shared with
#: another process, and the launch waited for the slow half
RANGES_PER_THREAD = 2


#: work-items per thread below which a launch runs with fewer threads (inline under twice
#: this). 16384 with the Python pool's ~14 us round trip; 8192 with the native workers'
#: ~1.5-2 us (about 1 us more than an inline launch): a cheap elementwise kernel (~0.25 ns a
#: work-item) of 16384 work-items takes ~4 us inline and ~2 + 1.5 us split in halves
#: (``bench/pool.py`` prints the crossover; on the shared 2-core machine at load 5-7 it
#: was lost in the noise, so this is the cost model's figure)
MIN_ITEMS_PER_THREAD = 8192


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

    def __init__(self, num_threads: int, min_items_per_thread: int = MIN_ITEMS_PER_THREAD,
                 target: Any = None) -> None:
        self.num_threads = max(1, num_threads)
        self.min_items_per_thread = min_items_per_thread
        #: ranges per thread of a split launch (family plans size their jobs by it)
        self.ranges_per_thread = RANGES_PER_THREAD
        #: the CpuTarget of the native workers' code (None: Python workers only)
        self.target = target
        self._executor: ThreadPoolExecutor | None = None
        self._native: Any = None  # NativeWorkers, made on the first split kernel launch
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
        """Call ``fn`` on ranges covering ``[0, groups)``, each once; re-raise the first
        failure (ranges not started by then are skipped).

        ``items_per_group`` is the work of one group (work-items, or work-items times their
        loop iterations): a launch of less than ``min_items_per_thread`` per thread runs
        with fewer threads. The ranges of a split launch run in any order, on any thread.
        """
        parts = self._parts(groups, items_per_group)
        if parts <= 1:
            fn(0, groups)
            return
        claims = _Claims(fn, split_range(groups, parts * self.ranges_per_thread))
        try:
            pool = self._pool()
            for _ in range(parts - 1):
                pool.submit(claims.work)
        except RuntimeError:  # shut down by another thread meanwhile: the rest runs here
            pass
        claims.work()
        claims.wait()

    def run_kernel(self, fn: Any, address: int, pointers: Any, scalars: Any, groups: int,
                   items_per_group: int) -> None:
        """Launch a kernel entry over ``[0, groups)`` once, as :meth:`bind_kernel`'s ``run``.

        Raises:
            CodegenError: the native workers' code did not compile (first split launch).
        """
        parts = self._parts(groups, items_per_group)
        if parts <= 1:
            fn(pointers, scalars, 0, groups, groups)
            return
        native = self._native
        if native is None:
            native = self._native_workers()
        if native is False:
            self.run(lambda b, e: fn(pointers, scalars, b, e, groups), groups,
                     items_per_group)
            return
        native.launch(address, pointers, scalars, groups, parts * self.ranges_per_thread,
                      parts)

    def bind_kernel(self, fn: Any, address: int, pointers: Any, scalars: Any, groups: int,
                    items_per_group: int) -> Callable[[], None]:
        """``run()``: launch a kernel entry over ``[0, groups)`` split as :meth:`run` splits
        it (decided now, for every call), its ranges run natively by the pool's native
        workers where they are available (:mod:`accy_backend_cpu.native_pool`), else by
        :meth:`run`'s Python workers. Each call reads the pointer array and scalar block
        as they are then.

        Args:
            fn: the kernel's ctypes function ``fn(pointers, scalars, begin, end, groups)``.
            address: its entry address (``ctypes.cast(fn, c_void_p).value``).
            pointers, scalars: its ctypes pointer array and scalar block (``run`` holds
                them; the caller keeps the kernel's code alive while it may call ``run``).
            groups: work-groups (> 0); items_per_group: as :meth:`run`.

        Raises:
            CodegenError: the native workers' code did not compile (first split launch).
        """
        parts = self._parts(groups, items_per_group)
        if parts <= 1:
            return functools.partial(fn, pointers, scalars, 0, groups, groups)
        native = self._native
        if native is None:
            native = self._native_workers()
        if native is False:
            def part(begin: int, end: int) -> None:
                fn(pointers, scalars, begin, end, groups)

            return functools.partial(self.run, part, groups, items_per_group)
        return native.bind(address, pointers, scalars, groups,
                           parts * self.ranges_per_thread, parts)

    def _native_workers(self) -> Any:
        """The NativeWorkers (made once), or False where they are unavailable."""
        with self._lock:
            if self._native is None:
                self._native = False
                if self.target is not None:
                    from accy_backend_cpu.native_call import native_calls_available
                    from accy_backend_cpu.native_pool import NativeWorkers, native_pool_available

                    if native_calls_available() and native_pool_available():
                        workers = NativeWorkers(self.target)
                        try:
                            workers.native(1)  # its code, now: a failure keeps Python's
                        except (AccyError, OSError) as e:
                            import warnings

                            warnings.warn(f"cpu pool: native workers unavailable ({e}); "
                                          "split launches use Python threads",
                                          RuntimeWarning, stacklevel=3)
                        else:
                            self._native = workers
            return self._native

    def shutdown(self) -> None:
        """Stop the worker threads, waiting for a running kernel launch first (a later
        ``run`` starts new ones)."""
        with self._lock:
            if self._executor is not None:
                self._executor.shutdown(wait=True)
                self._executor = None
            native = self._native
        if native:
            native.shutdown()


class _Claims:
    """The ranges of one split launch, claimed in order by the threads that run them."""

    def __init__(self, fn: Callable[[int, int], None], ranges: list[tuple[int, int]]) -> None:
        self.fn = fn
        self.ranges = ranges
        self.next = 0
        self.running = 0
        self.error: BaseException | None = None
        self.cond = threading.Condition(threading.Lock())

    def work(self) -> None:
        """Run ranges until none is left (or one failed); a late worker finds none."""
        cond = self.cond
        while True:
            with cond:
                if self.error is not None or self.next >= len(self.ranges):
                    return
                begin, end = self.ranges[self.next]
                self.next += 1
                self.running += 1
            try:
                self.fn(begin, end)
            except BaseException as exc:  # re-raised by wait() in the calling thread
                with cond:
                    if self.error is None:
                        self.error = exc
            finally:
                with cond:
                    self.running -= 1
                    if not self.running:
                        cond.notify_all()

    def wait(self) -> None:
        """Return once every claimed range is done (the caller claims until none is left
        first, so every range is then done); raise the first failure."""
        with self.cond:
            while self.running:
                self.cond.wait()
        if self.error is not None:
            raise self.error
