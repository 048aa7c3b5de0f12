"""A chain of bound CPU launches called as one builtin function, without ctypes per call.

A ctypes call costs about a microsecond (argument conversion, the GIL released and taken,
the call frame), and reading an ndarray's address from Python another 0.3 us an array; for
a small sparse matrix-vector product that is more than the product itself.
:func:`bind_native_call` returns a builtin function (``PyCFunction_NewEx`` over a
``METH_FASTCALL`` trampoline compiled here with LLVM) that does both natively:
``f(a0, a1, ..., fail)`` reads the data pointer of each ndarray ``a_i`` (at the offset of
:data:`accy.runtime.fast_call._OFFSET`), builds each launch's pointer array on its own stack
from the bound buffers and those addresses, calls the kernels in order, and returns ``a0``,
or ``fail`` as soon as a kernel stored something other than -1 in the call's error word
(a kernel's ``"err"`` slot; the word lives on the trampoline's stack, one per call).

Threads: nothing shared is written per call (the pointer arrays and the error word are on
the calling thread's stack), so one function may be called from many threads at once; the
GIL is released around the kernels when ``release_gil`` (bigger launches), kept for tiny ones
(as numpy does). Lifetime: the function holds its block (a ctypes structure), which holds
the loaded kernels, their engines and the trampoline's engine, so the code and every bound
buffer stay alive as long as the function does. Launches run whole on the calling thread
(``[0, groups)``), except those bound with a ``works`` entry that the pool would split:
those call the pool's ``accy_pool_launch`` (:mod:`accy_backend_cpu.native_pool`: its
native workers run ranges; it runs whole on the caller while another launch holds the
pool), after calling the pool's ``attention()`` with the GIL when its workers sleep or are
not started; the function then holds the pool's workers object too.

Availability (:func:`native_calls_available`): CPython with the GIL, where ndarray and
ctypes object layouts were checked on probes at import; elsewhere callers keep their ctypes
path.
"""

from __future__ import annotations

import ctypes
import sys
import sysconfig
import threading
from collections.abc import Sequence
from typing import Any

from accy.errors import LaunchError

from accy_backend_cpu.launch_args import live_kernel, pack_scalars

__all__ = ["bind_native_call", "native_calls_available"]

_METH_FASTCALL = 0x0080
_WORD = 8
_lock = threading.Lock()
_trampolines: dict[tuple, tuple[Any, int]] = {}


class _MethodDef(ctypes.Structure):
    _fields_ = [("ml_name", ctypes.c_char_p), ("ml_meth", ctypes.c_void_p),
                ("ml_flags", ctypes.c_int), ("ml_doc", ctypes.c_char_p)]


def _layout() -> tuple[int, int] | None:
    """``(ndarray data offset, ctypes buffer-pointer offset)`` or None where unchecked."""
    if sys.implementation.name != "cpython" or sysconfig.get_config_var("Py_GIL_DISABLED"):
        return None
    from accy.runtime.fast_call import _OFFSET

    if _OFFSET is None:
        return None
    probe = (ctypes.c_int64 * 4)()
    head = 2 * ctypes.sizeof(ctypes.c_void_p)  # CDataObject: PyObject_HEAD, then b_ptr
    if ctypes.c_void_p.from_address(id(probe) + head).value != ctypes.addressof(probe):
        return None
    return _OFFSET, head


_LAYOUT = _layout()


def native_calls_available() -> bool:
    """Whether :func:`bind_native_call` works in this interpreter."""
    return _LAYOUT is not None


def _ir(shape: tuple, data_off: int, self_off: int) -> str:
    """The trampoline of one shape: per launch ``(n_buffers, ((slot, source), ...), split)``
    with source ``("arg", i)`` or ``("err",)``; other slots take the block's bound pointer;
    ``split``: the launch goes through the pool's ``accy_pool_launch``."""
    n_args = 1 + max((s[1] for _, srcs, _ in shape for _, s in srcs if s[0] == "arg"),
                     default=0)
    pooled = any(split for _, _, split in shape)
    lines = ["define ptr @accy_native_call(ptr %self, ptr %args, i64 %nargs) {",
             "entry:",
             f"  %argok = icmp eq i64 %nargs, {n_args + 1}",
             "  br i1 %argok, label %go, label %refuse",
             "refuse:",
             "  ret ptr null",
             "go:",
             f"  %bpp = getelementptr i8, ptr %self, i64 {self_off}",
             "  %blk = load ptr, ptr %bpp",
             "  %err = alloca i32, align 4",
             "  store i32 -1, ptr %err"]
    for i in range(n_args + 1):
        lines += [f"  %ap{i} = getelementptr ptr, ptr %args, i64 {i}",
                  f"  %a{i} = load ptr, ptr %ap{i}"]
    for i in range(n_args):
        lines += [f"  %dp{i} = getelementptr i8, ptr %a{i}, i64 {data_off}",
                  f"  %d{i} = load ptr, ptr %dp{i}"]
    pre = "go"
    if pooled:  # words 2-5: the pool's sleepers word, attention(), PyObject_CallObject,
        # Py_DecRef, PyErr_Clear: a non-zero word calls attention() (the GIL is held here)
        lines += ["  %slpp = getelementptr i64, ptr %blk, i64 2",
                  "  %slp = load ptr, ptr %slpp",
                  "  %slv = load atomic i64, ptr %slp monotonic, align 8",
                  "  %need = icmp ne i64 %slv, 0",
                  "  br i1 %need, label %attn, label %attended",
                  "attn:"]
        for i, name in enumerate(("cb", "callf", "decf", "clrf")):
            lines += [f"  %{name}p = getelementptr i64, ptr %blk, i64 {3 + i}",
                      f"  %{name} = load ptr, ptr %{name}p"]
        lines += ["  %res = call ptr %callf(ptr %cb, ptr null)",
                  "  %failed = icmp eq ptr %res, null",
                  "  br i1 %failed, label %clear, label %decref",
                  "clear:",
                  "  call void %clrf()",
                  "  br label %attended",
                  "decref:",
                  "  call void %decf(ptr %res)",
                  "  br label %attended",
                  "attended:"]
        pre = "attended"
    lines += ["  %save = load ptr, ptr %blk",
              "  %rp = getelementptr i64, ptr %blk, i64 1",
              "  %restore = load ptr, ptr %rp",
              "  %keep = icmp eq ptr %save, null",
              "  br i1 %keep, label %start, label %release",
              "release:",
              "  %ts = call ptr %save()",
              "  br label %start",
              "start:",
              f"  %tsv = phi ptr [ null, %{pre} ], [ %ts, %release ]",
              "  br label %run0"]
    word = 7 if pooled else 2
    for k, (n_buf, sources, split) in enumerate(shape):
        extra = 3 if split else 0  # the pool's block, accy_pool_launch, the ranges
        src = dict(sources)
        lines += [f"run{k}:",
                  f"  %fp{k} = getelementptr i64, ptr %blk, i64 {word}",
                  f"  %fn{k} = load ptr, ptr %fp{k}",
                  f"  %sp{k} = getelementptr i64, ptr %blk, i64 {word + 1}",
                  f"  %sc{k} = load ptr, ptr %sp{k}",
                  f"  %gp{k} = getelementptr i64, ptr %blk, i64 {word + 2}",
                  f"  %g{k}w = load i64, ptr %gp{k}",
                  f"  %g{k} = trunc i64 %g{k}w to i32",
                  f"  %bufs{k} = alloca [{max(1, n_buf)} x ptr], align 8"]
        for slot in range(n_buf):
            lines.append(f"  %q{k}_{slot} = getelementptr ptr, ptr %bufs{k}, i64 {slot}")
            s = src.get(slot)
            if s is None:
                lines += [f"  %tp{k}_{slot} = getelementptr i64, ptr %blk, i64 "
                          f"{word + 3 + extra + slot}",
                          f"  %t{k}_{slot} = load ptr, ptr %tp{k}_{slot}",
                          f"  store ptr %t{k}_{slot}, ptr %q{k}_{slot}"]
            elif s[0] == "arg":
                lines.append(f"  store ptr %d{s[1]}, ptr %q{k}_{slot}")
            else:
                lines.append(f"  store ptr %err, ptr %q{k}_{slot}")
        nxt = f"run{k + 1}" if k + 1 < len(shape) else "done"
        if split:
            for i, name in enumerate(("ctl", "pl", "rg")):
                lines += [f"  %{name}p{k} = getelementptr i64, ptr %blk, i64 {word + 3 + i}",
                          f"  %{name}{k} = load {'i64' if name == 'rg' else 'ptr'}, "
                          f"ptr %{name}p{k}"]
            lines.append(f"  call void %pl{k}(ptr %ctl{k}, ptr %fn{k}, ptr %bufs{k}, "
                         f"ptr %sc{k}, i64 %g{k}w, i64 %rg{k})")
        else:
            lines.append(f"  call void %fn{k}(ptr %bufs{k}, ptr %sc{k}, i32 0, i32 %g{k}, "
                         f"i32 %g{k})")
        lines += [f"  %e{k} = load i32, ptr %err",
                  f"  %ok{k} = icmp eq i32 %e{k}, -1",
                  f"  br i1 %ok{k}, label %{nxt}, label %done"]
        word += 3 + extra + n_buf
    last = n_args
    lines += ["done:",
              "  br i1 %keep, label %finish, label %retake",
              "retake:",
              "  call void %restore(ptr %tsv)",
              "  br label %finish",
              "finish:",
              "  %ef = load i32, ptr %err",
              "  %good = icmp eq i32 %ef, -1",
              f"  %out = select i1 %good, ptr %a0, ptr %a{last}",
              "  %rc = load i64, ptr %out",
              "  %rc1 = add i64 %rc, 1",
              "  store i64 %rc1, ptr %out",
              "  ret ptr %out",
              "}"]
    return "\n".join(lines) + "\n"


def _trampoline(backend: Any, shape: tuple) -> tuple[Any, int]:
    """``(engine, address)`` of the trampoline for ``shape`` (compiled once per process,
    target and shape)."""
    from accy.codegen.worker import compile_here

    key = (backend.target.fingerprint(), shape)
    with _lock:
        got = _trampolines.get(key)
        if got is None:
            text = _ir(shape, *_LAYOUT)  # type: ignore[misc]
            obj = compile_here(backend.target.request(text, ("obj",)))["obj"]
            engine, addresses = backend._engine([obj], ["accy_native_call"])
            got = _trampolines[key] = (engine, addresses["accy_native_call"])
    return got


def bind_native_call(backend: Any,
                     launches: Sequence[tuple[Any, int, Sequence[tuple[str, int | float]],
                                              Sequence[Any]]],
                     release_gil: bool, works: Sequence[int | None] | None = None) -> Any:
    """A builtin function running ``launches`` in order on the calling thread.

    Args:
        launches: per launch ``(loaded kernel, groups, scalars, slots)``; each slot is an
            int (a bound address), ``("arg", i)`` (the data of the call's ndarray argument
            ``i``) or ``"err"`` (the call's error word, an i32 starting at -1).
        release_gil: release the GIL while the kernels run.
        works: per launch its total work (work-items times their loop iterations, or
            what stands for it, e.g. a sparse product's rows plus stored entries), or None
            (the default for every launch): a launch whose work the backend's pool would
            split is split over the pool's native workers
            (:mod:`accy_backend_cpu.native_pool`; the GIL is then released), where they
            are available; a split launch runs whole on the caller while another launch
            holds the pool.

    Returns:
        ``f(a0, ..., a_{n-1}, fail)``: every ``a_i`` must be an exact ndarray whose buffer
        the kernels may use as bound (the caller checks dtypes, sizes and aliasing); returns
        ``a0``, or ``fail`` when a kernel set the error word (later launches are skipped).

    Raises:
        LaunchError: native calls are unavailable, a kernel was destroyed, a scalar count
            or dtype mismatch, or a slot count that is not the kernel's.
        CodegenError: the pool's native code did not compile (first split of the process).
    """
    if _LAYOUT is None:
        raise LaunchError("cpu: native calls need CPython with the GIL (checked layouts)")
    parts = _parts(backend, launches, works)
    native = backend.pool._native_workers() if any(p > 1 for p in parts) else False
    pool_words: list[int] = []
    if native:
        ctl, pool_launch, attention = native.native(max(parts))
        api = ctypes.pythonapi
        pool_words = [ctl + 8 * 16, id(attention)] + [
            ctypes.cast(f, ctypes.c_void_p).value
            for f in (api.PyObject_CallObject, api.Py_DecRef, api.PyErr_Clear)]
        release_gil = True
    shape, words, keep = [], [0, 0, *pool_words], [native, attention if native else None]
    for (loaded, groups, scalars, slots), n_parts in zip(launches, parts, strict=True):
        name, meta = live_kernel(loaded)
        if len(slots) != len(meta["buffers"]):
            raise LaunchError(f"launch {name!r}: {len(slots)} slots for "
                              f"{len(meta['buffers'])} buffers")
        packed = pack_scalars(name, meta, scalars)
        keep += [loaded, loaded.engine, packed]
        sources, bound = [], []
        for i, s in enumerate(slots):
            if isinstance(s, int):
                bound.append(s)
                continue
            bound.append(0)
            sources.append((i, ("err",) if s == "err" else ("arg", int(s[1]))))
        split = bool(native) and n_parts > 1
        shape.append((len(slots), tuple(sources), split))
        words += [ctypes.cast(loaded.function, ctypes.c_void_p).value,
                  ctypes.addressof(packed), int(groups)]
        if split:
            words += [ctl, pool_launch, min(int(groups), n_parts * backend.pool.ranges_per_thread)]
        words += bound
    engine, address = _trampoline(backend, tuple(shape))
    if release_gil:
        words[0] = ctypes.cast(ctypes.pythonapi.PyEval_SaveThread, ctypes.c_void_p).value
        words[1] = ctypes.cast(ctypes.pythonapi.PyEval_RestoreThread, ctypes.c_void_p).value
    block = _Block.of(words)
    method = _MethodDef(b"accy_native_call", address, _METH_FASTCALL, None)
    block.keep = (keep, engine, method)  # freed with the function, never before it
    new = ctypes.pythonapi.PyCFunction_NewEx
    new.restype, new.argtypes = ctypes.py_object, [ctypes.c_void_p, ctypes.py_object,
                                                   ctypes.c_void_p]
    return new(ctypes.addressof(method), block, None)


def _parts(backend: Any, launches: Sequence[Any], works: Sequence[int | None] | None
           ) -> list[int]:
    """Threads the backend's pool would split each launch over (1: not split)."""
    pool = getattr(backend, "pool", None)
    if not works or pool is None:
        return [1] * len(launches)
    out = []
    for (_, groups, _, _), work in zip(launches, works, strict=True):
        groups = int(groups)
        out.append(1 if work is None or groups <= 0 else
                   pool._parts(groups, max(1, -(-int(work) // groups))))
    return out


class _Block(ctypes.Structure):
    """The words a trampoline reads (a ctypes structure: its buffer is at a checked offset
    of the object; a Python subclass, so it can hold what must outlive the calls)."""

    _fields_ = [("words", ctypes.c_uint64 * 1)]

    @classmethod
    def of(cls, words: Sequence[int]) -> _Block:
        sized = type("_BlockN", (cls,), {"_fields_": [("more", ctypes.c_uint64 *
                                                        max(0, len(words) - 1))]})
        block = sized()
        view = (ctypes.c_uint64 * len(words)).from_address(ctypes.addressof(block))
        for i, w in enumerate(words):
            view[i] = w & (2**64 - 1)
        return block
