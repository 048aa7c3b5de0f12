"""Worker threads that wait for split launches in native code (the fast path of
:class:`~accy_backend_cpu.threadpool.WorkgroupPool`).

Each worker thread, started once (lazily, daemon), calls the LLVM-compiled loop of
:mod:`accy_backend_cpu.native_pool_ir` through ctypes (the GIL released): it spins on the
pool's control block, claims ranges of a posted job with an atomic fetch-add and calls the
kernel itself, so a range never returns to Python. After :data:`SPIN_NS` without a range it
returns to Python and sleeps on a condition until a launch wakes it (an idle process burns
no CPU; the first launch after a pause then runs on the caller until the worker is up,
tens of microseconds). The caller posts the job, runs ranges itself (natively) and waits
for the last one (spinning, ``sched_yield`` after :data:`YIELD_NS`).

Threads: one job at a time per pool (a lock); a launch that finds the pool busy (another
Python thread's launch) runs whole on its own thread, so nothing ever waits for a lock
held by a launch. Lifetime: the control block and the pool's code are held by every worker
and the code is never freed (one small module per process and target); the job's kernel,
pointer array and scalar block are the caller's, held by it until every claimed range is
finished (a late worker finds the ticket exhausted and reads nothing of the job).
:meth:`NativeWorkers.shutdown` waits for the running job, stops and joins the workers;
interpreter exit does the same (atexit), a forked child starts afresh (the parent's
workers do not exist there), a pool garbage-collected unclosed stops its workers.

Availability (:func:`native_pool_available`): 64-bit POSIX hosts with ``clock_gettime``
(Linux, macOS); elsewhere the pool keeps its Python workers.
"""

from __future__ import annotations

import atexit
import ctypes
import functools
import os
import threading
import time
import weakref
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

__all__ = ["MAX_RANGES", "SPIN_NS", "YIELD_NS", "NativeWorkers", "futex_call",
           "native_pool_available"]

#: ns a worker spins after its last range before it sleeps
SPIN_NS = 150_000
#: ns of waiting after which a spinning thread also yields its core between polls
YIELD_NS = 20_000
#: most ranges of one job (the ticket's 20-bit field, less room for late claims)
MAX_RANGES = (1 << 20) - 1024

_TICKET, _DONE, _SLEEPERS, _QUIT, _BUDGET, _CLOCK, _YIELD, _BUSY = 0, 8, 16, 24, 40, 41, 42, 48
_FUTEX_SLEEPERS, _FUTEX, _SEQ = 19, 43, 56
_WORDS = 64
#: the sleepers word of a generation whose workers are not started yet (non-zero: a launch
#: calls :meth:`NativeWorkers.attention`, which starts them)
NOT_STARTED = 1 << 32
_WORK_FN = ctypes.CFUNCTYPE(ctypes.c_int64, ctypes.c_void_p, ctypes.c_int64)
#: accy_pool_launch called with ctypes objects only (no argument conversion per call)
_RAW_LAUNCH_FN = ctypes.CFUNCTYPE(None)
_LAUNCH_FN = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p,
                              ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64)
_HOLD_FN = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
_POST_FN = ctypes.CFUNCTYPE(ctypes.c_int64, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p,
                            ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64)
_FINISH_FN = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int64)
_WAKE_FN = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
_lock = threading.Lock()
_exiting = False  # set at interpreter exit: launches then start no worker
_code: dict[str, tuple[Any, list[int]]] = {}  # fingerprint: (holder, POOL_ENTRIES addresses)
_live: weakref.WeakSet[NativeWorkers] = weakref.WeakSet()


def native_pool_available() -> bool:
    """Whether this host can run the native pool (64-bit ``long``, ``CLOCK_MONOTONIC``)."""
    return (ctypes.sizeof(ctypes.c_void_p) == 8 and ctypes.sizeof(ctypes.c_long) == 8
            and hasattr(time, "CLOCK_MONOTONIC") and os.name == "posix")


def futex_call() -> int:
    """The ``futex`` system call's number on this host (Linux x86-64 and AArch64), or 0:
    idle workers then sleep in Python on a condition instead of in the kernel."""
    import sys

    if not sys.platform.startswith("linux"):
        return 0
    return {"x86_64": 202, "amd64": 202, "aarch64": 98, "arm64": 98}.get(
        os.uname().machine.lower(), 0)


_FUTEX_CALL = futex_call()


def _functions(target: Any) -> list[int]:
    """The addresses of the pool's entries (:data:`~accy_backend_cpu.native_pool_ir.POOL_ENTRIES`)
    for ``target``: made once per process and target and kept for the life of the process
    (never unloaded).

    The code is linked into a shared object and kept in the artifact cache
    (:mod:`accy_backend_cpu.shared_object`), so a warm process loads it with ``dlopen``
    without llvmlite; without a linker it goes into an MCJIT engine.

    Raises:
        CodegenError: LLVM rejected the module.
    """
    key = target.fingerprint()
    got = _code.get(key)
    if got is None:
        with _lock:
            got = _code.get(key)
            if got is None:
                holder, addresses = _load_code(target)
                # never freed, not even at interpreter teardown: a worker may still be
                # leaving the spin loop when module globals are cleared
                ctypes.pythonapi.Py_IncRef(ctypes.py_object(holder))
                got = _code[key] = (holder, addresses)
    return got[1]


def _load_code(target: Any) -> tuple[Any, list[int]]:
    """``(what holds the code, the addresses of POOL_ENTRIES)``: the cached shared object,
    else compiled here and linked (and cached), else in an MCJIT engine."""
    from accy.hashing import sha256
    from accy.runtime.artifact_cache import enabled_cache, load_decoded

    from accy_backend_cpu import shared_object
    from accy_backend_cpu.native_pool_ir import POOL_ENTRIES, pool_ir

    text = pool_ir(target.triple)
    key = "cpu-native-pool-" + sha256(f"{target.fingerprint()}\0{text}".encode()).hexdigest()
    data = load_decoded(key, "so", bytes, "the native pool's code")
    if data is not None:
        try:
            return _entries(shared_object.load_library(data), POOL_ENTRIES)
        except (OSError, AttributeError):  # unwritable directory, refused: compile below
            pass
    from accy.backend import Artifact
    from accy.codegen.worker import compile_here

    obj = compile_here(target.request(text, ("obj",)))["obj"]
    data = shared_object.link([obj], list(POOL_ENTRIES))
    if data is not None:
        try:
            got = _entries(shared_object.load_library(data), POOL_ENTRIES)
        except (OSError, AttributeError):
            data = None
        else:
            cache = enabled_cache()
            if cache is not None:
                cache.store(key, Artifact(backend="cpu", kernel_name="native_pool",
                                          format="so", data=data, entry="", metadata={}))
            return got
    from accy_backend_cpu.loading import mcjit_engine

    engine, addresses = mcjit_engine(target, threading.Lock(), [obj], POOL_ENTRIES)
    return engine, [addresses[e] for e in POOL_ENTRIES]


def _entries(library: Any, names: Sequence[str]) -> tuple[Any, list[int]]:
    return library, [ctypes.cast(getattr(library, e), ctypes.c_void_p).value for e in names]


class _Block:
    """The control block (64-byte aligned words), one per :class:`NativeWorkers`."""

    def __init__(self) -> None:
        raw = np.zeros(_WORDS + 8, np.int64)
        # never freed (a few hundred bytes a pool): a worker may still be reading it when
        # the interpreter tears down
        ctypes.pythonapi.Py_IncRef(ctypes.py_object(raw))
        off = (-raw.ctypes.data % 64) // 8
        self.words = raw[off:off + _WORDS]
        self.address = self.words.ctypes.data
        self.native_wake: Any = None  # accy_pool_wake, once the code is loaded
        self.reset()

    def reset(self) -> None:
        """No job, no worker, no quit, not busy; the spin settings."""
        self.words[:] = 0
        self.words[_SLEEPERS] = NOT_STARTED
        self.words[_BUDGET] = SPIN_NS
        self.words[_CLOCK] = time.CLOCK_MONOTONIC
        self.words[_YIELD] = YIELD_NS
        self.words[_FUTEX] = _FUTEX_CALL


class _State:
    """One generation of workers: the block they spin on, their condition and threads."""

    def __init__(self, block: _Block) -> None:
        self.block = block
        self.cond = threading.Condition(threading.Lock())
        self.gen = 0
        self.quit = False
        self.threads: list[threading.Thread] = []

    def wake(self) -> None:
        with self.cond:
            self.gen += 1
            self.cond.notify_all()

    def stop(self) -> None:
        """Tell the workers to return (no join)."""
        self.quit = True
        self.block.words[_QUIT] = 1
        if self.block.native_wake is not None:  # those asleep in the kernel
            self.block.native_wake(self.block.address)
        self.wake()


def _worker(state: _State, work: Any) -> None:
    """A worker thread: the native loop, then sleep until woken, until told to quit."""
    woke = 0
    cond, address = state.cond, state.block.address
    while True:
        gen = state.gen
        if not work(address, woke):
            return
        with cond:
            while state.gen == gen and not state.quit:
                cond.wait()
        woke = 1


class NativeWorkers:
    """Native workers for launches of kernel entry points (started on the first launch).

    Args:
        target: the :class:`~accy_backend_cpu.target.CpuTarget` the pool's code is
            compiled for (on the first :meth:`bind`).
    """

    def __init__(self, target: Any) -> None:
        self.target = target
        self._lock = threading.Lock()  # starts, stops, wakes (never held by a launch)
        self._block = _Block()
        self._sleepers = ctypes.c_int64.from_address(self._block.address + 8 * _SLEEPERS)
        self._box = [_State(self._block)]  # the current generation (the finalizer's box)
        self._work: Any = None
        self._launch = 0
        self._launch_fn: Any = None
        self._hold: Any = None
        self._post: Any = None
        self._finish: Any = None
        self._wanted = 0  # workers a launch asked for
        _live.add(self)
        weakref.finalize(self, _stop_current, self._box)

    def _compile(self) -> None:
        if self._work is None:
            work, self._launch, hold, post, finish, wake = _functions(self.target)
            self._block.native_wake = _WAKE_FN(wake)
            self._launch_fn = _LAUNCH_FN(self._launch)
            self._hold, self._post, self._finish = _HOLD_FN(hold), _POST_FN(post), \
                _FINISH_FN(finish)
            self._work = _WORK_FN(work)

    def attention(self) -> None:
        """What a launch does when the sleepers word is non-zero: start the workers of the
        current generation if they are not, else wake the sleeping ones. Called with the
        GIL (a native call's trampoline calls it too); never raises for a stopped pool."""
        with self._lock:
            state = self._box[0]
            if state.quit or _exiting:  # (no new workers at interpreter exit)
                return
            if not state.threads:
                if self._wanted:
                    self._block.words[_SLEEPERS] = 0  # no worker of this generation yet
                    self._spawn(state)
                return
        state.wake()

    def _spawn(self, state: _State) -> None:
        """Start workers of ``state`` up to the number wanted (under ``_lock``); a thread
        that cannot start (a process out of threads) leaves its ranges to the others."""
        while len(state.threads) < self._wanted:
            t = threading.Thread(target=_worker, args=(state, self._work), daemon=True,
                                 name=f"accy-cpu-native-{len(state.threads)}")
            try:
                t.start()
            except RuntimeError:
                self._wanted = len(state.threads)
                return
            state.threads.append(t)

    def native(self, threads: int) -> tuple[int, int, Any]:
        """``(control block address, accy_pool_launch address, attention)`` for native
        callers of launches on up to ``threads`` threads (:mod:`native_call`): they call
        ``attention()`` (with the GIL) when the word at ``block + 8 * 16`` is non-zero,
        then the launch; what they return must hold this object.

        Raises:
            CodegenError: the pool's code did not compile (first use of the process).
        """
        self._compile()
        if threads - 1 > self._wanted:
            with self._lock:
                self._wanted = max(self._wanted, threads - 1)
                state = self._box[0]
                if state.threads and not state.quit and not _exiting:  # more of it
                    self._spawn(state)
        return self._block.address, self._launch, self.attention

    def bind(self, fn: int, pointers: Any, scalars: Any, groups: int, ranges: int,
             threads: int) -> Callable[[], None]:
        """``go()``: run kernel entry ``fn`` (an address) over ``[0, groups)`` in ``ranges``
        ranges on up to ``threads`` threads (the caller included), or whole on the calling
        thread when another launch holds the pool. ``pointers`` and ``scalars`` are the
        kernel's ctypes arrays, read at each call (``go`` holds them; the caller holds the
        kernel's code).

        Raises:
            CodegenError: the pool's code did not compile (first bind of the process).
        """
        self.native(threads)
        groups = int(groups)
        call = functools.partial(
            _RAW_LAUNCH_FN(self._launch), ctypes.c_void_p(self._block.address),
            ctypes.c_void_p(fn), pointers, scalars, ctypes.c_int64(groups),
            ctypes.c_int64(max(1, min(ranges, groups, MAX_RANGES))))
        sleepers, attention = self._sleepers, self.attention

        def go() -> None:
            if sleepers.value:
                attention()
            call()

        go.keep = (pointers, scalars, self)  # type: ignore[attr-defined]
        return go

    def launch(self, fn: int, pointers: Any, scalars: Any, groups: int, ranges: int,
               threads: int) -> None:
        """Run once what :meth:`bind` binds (without binding: argument conversion per call).

        Raises:
            CodegenError: the pool's code did not compile (first launch of the process).
        """
        self.native(threads)
        if self._sleepers.value:
            self.attention()
        self._launch_fn(self._block.address, fn, pointers, scalars, groups,
                        max(1, min(ranges, groups, MAX_RANGES)))

    def post(self, fn: int, arg: int, helpers: int) -> bool:
        """Post a job of ``helpers`` ranges whose ``fn`` (an address) is called as
        ``fn(arg, 0, range, range + 1, helpers)`` by the workers, without running any of it
        here; False (nothing posted) when another launch holds the pool. A True must be
        followed by :meth:`finish` with the same ``helpers`` (the pool is held until then;
        ``fn`` must return once the caller tells it to, e.g. a team's quit flag).

        Raises:
            CodegenError: the pool's code did not compile (first use of the process).
        """
        self.native(helpers + 1)
        if self._sleepers.value:
            self.attention()
        return bool(self._post(self._block.address, fn, arg, None, helpers, helpers))

    def finish(self, helpers: int) -> None:
        """Run the ranges of the posted job that no worker claimed, wait for the others,
        free the pool."""
        self._finish(self._block.address, helpers)

    def shutdown(self, timeout: float | None = None) -> None:
        """Wait for the running launch, stop and join the workers (a later launch starts
        new ones). ``timeout`` (interpreter exit): seconds to wait for the running launch
        (then only tell the workers to stop) and for each worker."""
        if self._hold is None:
            return  # never launched: no worker
        if timeout is not None:  # interpreter exit: never wait for an endless launch
            deadline = time.monotonic() + timeout
            while self._block.words[_BUSY] and time.monotonic() < deadline:
                time.sleep(0.001)
            if self._block.words[_BUSY]:
                self._box[0].stop()  # its workers return once the launch is done
                return
        with self._lock:
            self._hold(self._block.address)  # launches meanwhile run on their callers
            try:
                state = self._box[0]
                state.stop()
                for t in state.threads:
                    t.join(timeout)
                if any(t.is_alive() for t in state.threads):
                    return  # (interpreter exit only) the block stays the old workers'
                self._block.reset()  # frees the busy word too
                self._box[0] = _State(self._block)
            finally:
                self._block.words[_BUSY] = 0

    def _after_fork(self) -> None:
        """In a forked child: the parent's workers do not exist here (nor a launch)."""
        if self._lock.locked():
            self._lock.release()
        self._block.reset()
        self._box[0] = _State(self._block)


def _stop_current(box: list[_State]) -> None:
    box[0].stop()


def _shutdown_all() -> None:
    global _exiting
    _exiting = True
    for workers in list(_live):
        workers.shutdown(timeout=2.0)


def _after_fork_in_child() -> None:
    for workers in list(_live):
        workers._after_fork()


atexit.register(_shutdown_all)
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)
