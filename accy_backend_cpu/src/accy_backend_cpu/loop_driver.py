"""The CPU backend's native loop driver: a whole loop node in one native call.

:meth:`CpuBackend.bind_loop` encodes a :class:`~accy.runtime.loop_plan.FlatLoop` for the
interpreter of :mod:`accy_backend_cpu.loop_ir` (compiled once per process and target, in
this process) and returns a :class:`NativeLoop`; the runtime calls
:meth:`NativeLoop.run` with the buffers of the loop's origins, and every iteration,
launch, double-buffer swap and ``loop.while`` condition read then happens without Python.

Encoding (64-bit words, jump targets are word offsets): ``0`` end; ``1 entry scalars groups
parts n slot*n`` launch; ``2 dst src`` move; ``3 r own spare`` toggle; ``4 c n`` set
counter; ``5 c target`` jump if the counter is 0, else count down; ``6 target`` jump;
``7 slot target`` jump if the byte at slot's buffer is 0.

What the per-launch path checks per launch is checked here once: scalars, work-group size
and that the kernels are alive when binding; buffer kinds, whole elements and the
disjointness of written buffers (:func:`~accy.runtime.loop_plan.alias_facts`) once per run.
Launches that :class:`~accy_backend_cpu.threadpool.WorkgroupPool` would split are split the
same way over a team: the pool's worker threads run :func:`accy_loop_help` for the length
of the run (one job of the pool's native workers, or one submit per Python worker, per run,
not per launch).
"""

from __future__ import annotations

import ctypes
import functools
import threading
from typing import Any

import numpy as np
from accy.errors import InternalError, LaunchError
from accy.runtime.fast_call import array_address

from accy_backend_cpu.launch_args import check_workgroup, live_kernel, pack_scalars
from accy_backend_cpu.loop_ir import DRIVER_ENTRIES, HELP_FN, RUN_FN, driver_ir

__all__ = ["NativeLoop", "bind_loop"]

_OPS = {"move": 2, "toggle": 3, "setc": 4, "decjz": 5, "jmp": 6, "brz": 7}
_MAX_BUFFERS = 256  # the driver's pointer array
_MAX_PARTS = (1 << 20) - 1  # the ticket's part field
_lock = threading.Lock()
_drivers: dict[str, tuple[Any, Any, Any]] = {}


def _driver(backend: Any, kernels: dict[str, Any]) -> tuple[Any, Any, Any]:
    """``(run, help, engine)``: the ctypes functions of the driver and what holds their
    code: the one in the kernels' program (``LoadedKernel.driver``, its engine), else one
    compiled in this process (once per target, kept for the process)."""
    for loaded in kernels.values():
        engine, driver = loaded.engine, getattr(loaded, "driver", None)
        if driver is not None and engine is not None:
            return driver[0], driver[1], engine
    from accy.codegen.worker import compile_here

    key = backend.target.fingerprint()
    with _lock:
        got = _drivers.get(key)
        if got is None:
            request = backend.target.request(driver_ir(backend.target.triple), ("obj",))
            obj = compile_here(request)["obj"]
            engine, addresses = backend._engine([obj], DRIVER_ENTRIES)
            got = _drivers[key] = (engine, RUN_FN(addresses[DRIVER_ENTRIES[0]]),
                                   HELP_FN(addresses[DRIVER_ENTRIES[1]]))
    return got[1], got[2], got[0]


_U8 = np.dtype(np.uint8)


#: the data address of an ndarray, read from the object where that layout was checked
#: (``__array_interface__`` builds a dict per call)
_address = array_address


class NativeLoop:
    """A bound loop program; :meth:`run` runs it once. Built by :func:`bind_loop`.

    Attributes:
        runs: completed native runs (tests and profiles read it).
    """

    def __init__(self, backend: Any, flat: Any, code: np.ndarray, keep: list[Any],
                 parallel: bool, driver: tuple[Any, Any, Any]) -> None:
        self.backend = backend
        self.flat = flat
        self.code = code
        # packed scalars, loaded kernels and their engines (the code) that the code points
        # into: a destroyed kernel's engine stays alive here, and run() refuses to start
        self._keep = keep
        self._kernels = list(keep[::3])  # (kernel, engine, scalars) per launch
        self.parallel = parallel
        self.entries = np.array([e for e, _, _ in flat.origins], dtype=np.int64)
        self.element_bytes = np.array(flat.element_bytes, dtype=np.int64)
        self.table = np.zeros(max(1, flat.size), dtype=np.int64)
        self.team = np.zeros(32, dtype=np.int64)
        self._team_address = self.team.ctypes.data  # (``ndarray.ctypes`` costs ~2 us a read)
        self._run, self._help, self._driver_code = driver
        self._code_address = code.ctypes.data  # the code is patched in place, never moved
        self.runs = 0
        self._busy = threading.Lock()
        self._checked: list[int] | None = None  # (address, bytes) per buffer of a passed run
        self._table_address = self.table.ctypes.data

    def run(self, buffers: list[Any]) -> bool:
        """Run the loop on ``buffers`` (one per :attr:`FlatLoop.origins` entry, in order).

        Returns False, having run nothing, when a buffer is not a CPU buffer of whole
        elements, two buffers that meet in a launch overlap (the caller then runs the
        loop launch by launch, whose checks name the problem), or another thread is running
        this loop now.

        Raises:
            LaunchError: one of its kernels was destroyed (:meth:`CpuBackend.destroy`).
            InternalError: the driver met a bad instruction (a bug; please report).
        """
        for loaded in self._kernels:
            live_kernel(loaded)
        # its pointer table and team are this loop's own: a second thread running it at
        # once (the executable's lock serializes calls; this guards any other caller) takes
        # the launch-by-launch path instead of sharing them
        if not self._busy.acquire(blocking=False):
            return False
        try:
            return self._run_locked(buffers)
        finally:
            self._busy.release()

    def _run_locked(self, buffers: list[Any]) -> bool:
        key: list[int] = []
        for buf in buffers:
            if type(buf) is not np.ndarray or buf.dtype != _U8:
                return False
            key += (_address(buf), buf.nbytes)
        # the checks of the buffers a run last passed are not repeated (a workspace's
        # temporaries and the pool's buffers come back at the same addresses)
        if key != self._checked:
            n = len(buffers)
            spans = np.array(key, dtype=np.int64).reshape(n, 2)
            spans[:, 1] += spans[:, 0]
            if n and ((spans[:, 1] - spans[:, 0]) % self.element_bytes).any():
                return False
            if not self.flat.disjoint(spans):
                return False
            self._checked = key
        table = self.table
        table[self.entries] = key[::2]
        self._execute(self._table_address, self.team, self._team_address)
        return True

    def _execute(self, table: int, team: np.ndarray, team_address: int) -> None:
        """One native run over the slot table at address ``table`` with team block
        ``team`` at ``team_address`` (helpers started and waited for when
        :attr:`parallel`)."""
        finish = self._start_team(team) if self.parallel else None
        try:
            status = self._run(self._code_address, table, team_address)
        finally:
            if finish is not None:
                team[16] = 1  # quit
                finish()
        if status:
            self._bad(status)
        self.runs += 1

    def _bad(self, status: int) -> None:
        raise InternalError(f"{self.flat.name}: the native loop driver met a bad "
                            f"instruction at word {-status - 1}; please report")

    def bind_call(self, buffers: list[Any]) -> tuple[Any, Any] | None:
        """``(table, run)``: this loop bound once for repeated runs (the small-call plans of
        :mod:`accy.runtime.fast_call`), with its own slot table and team, so it never waits
        for nor disturbs a :meth:`run` of another thread.

        ``buffers``, one per :attr:`FlatLoop.origins` entry: a CPU buffer bound now (a
        persistent temporary or constant), or the byte size (``int``) of an array whose
        address the caller writes into ``table[entry]`` before each ``run()``: a fresh
        result, or a parameter the loop only reads, so the caller guarantees it overlaps no
        buffer the loop writes. What :meth:`run` checks per run is checked here once.

        Returns None when those checks refuse (a foreign or ragged buffer, bound buffers
        that overlap). ``run()`` holds the kernels, their code and the bound buffers.

        Raises:
            LaunchError: from ``run()``, once one of its kernels was destroyed.
            InternalError: from ``run()``, the driver met a bad instruction (a bug).
        """
        table = self._bound_table(buffers)
        if table is None:
            return None
        team = np.zeros(32, dtype=np.int64)
        kernels, address, execute = self._kernels, ctypes.addressof(table), self._execute
        team_address = team.ctypes.data
        if self.parallel:
            def run() -> None:
                for loaded in kernels:
                    if loaded.function is None:
                        live_kernel(loaded)  # raises LaunchError
                execute(address, team, team_address)
        else:  # _execute without helpers, inlined (a loop of tiny launches: ~1.5 us a run)
            native, code = self._run, self._code_address

            def run() -> None:
                for loaded in kernels:
                    if loaded.function is None:
                        live_kernel(loaded)
                status = native(code, address, team_address)
                if status:
                    self._bad(status)
                self.runs += 1

        run.keep = (self, table, team, list(buffers))
        return table, run

    def _bound_table(self, buffers: list[Any]) -> Any:
        """A slot table with the addresses of :meth:`bind_call`'s buffers bound now, after
        the checks of a run; None when they refuse."""
        n = len(self.flat.origins)
        if len(buffers) != n:
            return None
        spans = np.zeros((n, 2), dtype=np.int64)
        table = (ctypes.c_int64 * max(1, self.flat.size))()
        for i, ((entry, _, _), buf) in enumerate(zip(self.flat.origins, buffers, strict=True)):
            if isinstance(buf, int):
                size = buf  # bound per call: an empty span overlaps nothing
            elif type(buf) is np.ndarray and buf.dtype == _U8:
                size = buf.nbytes
                spans[i] = table[entry] = _address(buf)
                spans[i, 1] += size
            else:
                return None
            if size % int(self.element_bytes[i]):
                return None
        return table if self.flat.disjoint(spans) else None

    def _start_team(self, team: np.ndarray) -> Any:
        """Start the helpers of one run; return what waits for them once the team's quit
        flag is set (None: no helper). The pool's native workers run the helper loop where
        they are available (one job of a range per helper, holding the pool for the run;
        when another launch holds it, the driver runs every part itself), else its Python
        workers (:meth:`_start_helpers`)."""
        pool = self.backend.pool
        if pool.num_threads <= 1:
            return None
        native = pool._native_workers()
        if native:
            team[:] = 0
            helpers = pool.num_threads - 1
            if native.post(ctypes.cast(self._help, ctypes.c_void_p).value,
                           team.ctypes.data, helpers):
                return functools.partial(native.finish, helpers)
            return None
        futures = self._start_helpers(team)
        return lambda: [f.result() for f in futures]

    def _start_helpers(self, team: np.ndarray | None = None) -> list[Any]:
        team = self.team if team is None else team
        team[:] = 0
        pool = self.backend.pool
        if pool.num_threads <= 1:
            return []
        helpers: list[Any] = []
        try:
            executor = pool._pool()
            address = team.ctypes.data
            for _ in range(pool.num_threads - 1):
                helpers.append(executor.submit(self._help, address))
        except RuntimeError:  # shut down meanwhile: the driver runs the parts left to it,
            pass  # and run() still waits for the helpers submitted before (they read team)
        return helpers


def bind_loop(backend: Any, flat: Any, kernels: dict[str, Any]) -> NativeLoop | None:
    """Encode ``flat`` (alias facts filled) for the driver; ``kernels``: name → loaded
    kernel. None when a launch has more buffers than the driver's pointer array.

    Raises:
        LaunchError: a kernel was destroyed, or a launch's scalars or work-group size do
            not match its kernel (the checks of :meth:`CpuBackend.launch`).
    """
    from accy.backend import Geometry

    words: list[int] = []
    starts: list[int] = []
    patches: list[tuple[int, int]] = []  # (word index, op index)
    keep: list[Any] = []
    parallel = False
    pool = backend.pool
    for op in flat.ops:
        starts.append(len(words))
        kind = op[0]
        if kind == "launch":
            ln = op[1]
            loaded = kernels[ln.kernel]
            name, meta = live_kernel(loaded)
            if len(meta["buffers"]) != len(ln.slots):
                raise LaunchError(f"launch {name!r}: expected {len(meta['buffers'])} buffers, "
                                  f"got {len(ln.slots)}")
            if len(ln.slots) > _MAX_BUFFERS:
                return None
            check_workgroup(name, meta, Geometry(ln.groups, ln.workgroup_size))
            scalars = pack_scalars(name, meta, list(ln.scalars))
            keep += [loaded, loaded.engine, scalars]
            work = meta["workgroup_size"] * meta.get("work_per_item", 1)
            parts = pool._parts(ln.groups, work)
            parallel |= parts > 1
            fn = ctypes.cast(loaded.function, ctypes.c_void_p).value
            words += [1, fn, ctypes.addressof(scalars), ln.groups, min(parts, _MAX_PARTS),
                      len(ln.slots), *ln.slots]
        elif kind == "wstart":
            continue
        elif kind in ("decjz", "jmp", "brz"):
            target = op[2] if kind != "jmp" else op[1]
            words += [_OPS[kind]] + ([op[1]] if kind != "jmp" else []) + [0]
            patches.append((len(words) - 1, target))
        else:
            words += [_OPS[kind], *op[1:]]
    starts.append(len(words))
    words.append(0)
    for at, target in patches:
        words[at] = starts[target]
    code = np.array(words, dtype=np.int64)
    return NativeLoop(backend, flat, code, keep, parallel, _driver(backend, kernels))
