"""Kernel-library ops: gather, scatter, scatter_add, sort, argsort, random_uniform,
segment_sum.

Each op exists twice with the same operands, attributes and semantics:

- ``tensor.<op>``: what builders and the frontend write;
- ``library.<op>``: a call into the kernel family of that name, produced by the tensor
  stage's ``indexing-lowering{kernel-library=enabled}`` (the dispatch stage wraps each in a
  ``dispatch.region {kind = "library"}`` and the kernel stage expands it into the family's
  kernels and launches).

Examples::

    %2 = tensor.gather %0, %1 {axis = 0, mode = "raise"} : (f32[16,8], i32[24]) -> f32[24,8]
    %3 = tensor.scatter %0, %1, %2 {axis = 0} : (f32[16,8], i32[24], f32[24,8]) -> f32[16,8]
    %4 = tensor.scatter_add %0, %1, %2 {axis = 0} : (f32[16,8], i32[24], f32[24,8]) -> f32[16,8]
    %5 = tensor.sort %0 {axis = 1} : (f32[16,8]) -> f32[16,8]
    %6 = tensor.argsort %0 {axis = 1} : (f32[16,8]) -> i32[16,8]
    %7 = tensor.random_uniform {dtype = f32, seed = 42, shape = [4]} : () -> f32[4]
    %8 = tensor.segment_sum %0, %1 {num_segments = 3} : (f32[16,8], i32[16]) -> f32[3,8]

Semantics (numpy references below): ``gather`` is ``numpy.take(src, indices, axis, mode)``
(``mode`` ``raise``: an index outside ``[-n, n)`` raises ``IndexError`` before any kernel
runs; ``clip``; ``wrap``; negative indices count from the end). ``scatter`` writes
``values`` (shape ``dst.shape[:axis] + indices.shape + dst.shape[axis+1:]``) into a copy of
``dst``; with duplicate indices the last position wins. ``scatter_add`` is ``numpy.add.at``
on a copy (f32, f64, i32, i64). ``sort``/``argsort`` are stable along ``axis`` (NaN last, as
``numpy.sort(kind="stable")``); ``argsort`` gives i32 positions. ``random_uniform`` draws
``[low, high)`` floats from the counter-based stream keyed by ``(seed, offset)``
(``algorithm``, default Philox4x32-10; the same numbers on every backend).
``segment_sum`` sums rows of ``values`` (``(n, *inner)``) by ``segment_ids`` (``(n,)``, in
``[0, num_segments)``, checked before launch) into ``(num_segments, *inner)``.
"""

from __future__ import annotations

import math

import numpy as np

from accy.ir.dtypes import DType
from accy.ir.ops.common import FLOATS, NUMERIC, fail, normalize_axis, require_dtype
from accy.ir.ops.registry import OpDef, register_op
from accy.ir.types import TensorType

__all__ = ["FAMILY_OF", "LIBRARY_OPS", "TENSOR_OPS", "index_operand", "philox_uniform_host"]

INDEX_DTYPES = (DType.I32, DType.I64)
ADDABLE = (DType.F32, DType.F64, DType.I32, DType.I64)
#: the sort family's key dtypes (the frontend widens 8/16-bit integers to i32 first)
SORTABLE = (DType.F32, DType.F64, DType.I32, DType.I64, DType.U32)
MODES = ("raise", "clip", "wrap")
ALGORITHMS = ("philox4x32-10", "philox4x32-7", "threefry2x32-20", "threefry2x32-13",
              "threefry4x32-20", "threefry4x32-13", "squares")

#: op short name → kernel family name.
FAMILY_OF = {"gather": "gather", "scatter": "scatter", "scatter_add": "scatter_add",
             "sort": "sort", "argsort": "argsort", "random_uniform": "random",
             "segment_sum": "segment_sum"}
TENSOR_OPS = frozenset(f"tensor.{k}" for k in FAMILY_OF)
LIBRARY_OPS = frozenset(f"library.{k}" for k in FAMILY_OF)


def index_operand(op_name: str) -> int | None:
    """Operand position of the index array of op ``tensor.X``/``library.X`` (or None)."""
    short = op_name.split(".", 1)[1]
    return {"gather": 1, "scatter": 1, "scatter_add": 1, "segment_sum": 1}.get(short)


def _axis(op, t: TensorType, axis: int) -> int:
    if t.rank == 0:
        raise fail(op, f"expected an operand of rank >= 1, got {t}")
    return normalize_axis(op, axis, t.rank)


def _indices(op, t: TensorType) -> None:
    require_dtype(op, t, INDEX_DTYPES, "indices")


def _mode(op, mode: str) -> None:
    if mode not in MODES:
        raise fail(op, f"mode must be one of {', '.join(MODES)}, got {mode!r}")


def _gather_infer(op):
    def infer(types, attrs):
        src, idx = types
        axis = _axis(op, src, attrs["axis"])
        _indices(op, idx)
        _mode(op, attrs["mode"])
        require_dtype(op, src, NUMERIC, "src")
        if src.shape[axis] == 0 and idx.num_elements and attrs["mode"] != "raise":
            raise fail(op, f"cannot {attrs['mode']} indices into an axis of extent 0")
        return [src.with_shape(src.shape[:axis] + idx.shape + src.shape[axis + 1:])]
    return infer


def _gather_ref(xs, attrs):
    src, idx = xs
    axis = attrs["axis"] % src.ndim
    if attrs["mode"] == "raise":
        n = src.shape[axis]
        if idx.size and (idx.min() < -n or idx.max() >= n):
            raise IndexError(f"gather: index out of range for an axis of extent {n}")
    return [np.take(src, idx.astype(np.int64), axis=axis, mode=attrs["mode"])]


def _scatter_infer(op, allowed):
    def infer(types, attrs):
        dst, idx, vals = types
        axis = _axis(op, dst, attrs["axis"])
        _indices(op, idx)
        if "mode" in attrs:
            _mode(op, attrs["mode"])
        require_dtype(op, dst, allowed, "dst")
        want = dst.shape[:axis] + idx.shape + dst.shape[axis + 1:]
        if vals.shape != want or vals.dtype != dst.dtype:
            raise fail(op, f"values must be {dst.with_shape(want)} (dst.shape[:axis] + "
                       f"indices.shape + dst.shape[axis+1:]), got {vals}; broadcast or cast "
                       "them first")
        return [dst]
    return infer


def _norm_idx(idx, n, mode):
    idx = idx.astype(np.int64)
    if mode == "wrap":
        return np.mod(idx, n) if n else idx
    if mode == "clip":
        return np.clip(idx, 0, n - 1)
    if idx.size and (idx.min() < -n or idx.max() >= n):
        raise IndexError(f"scatter: index out of range for an axis of extent {n}")
    return np.where(idx < 0, idx + n, idx)


def _scatter_ref(xs, attrs):
    dst, idx, vals = xs
    axis = attrs["axis"] % dst.ndim
    out = np.moveaxis(dst.copy(), axis, 0)
    v = np.moveaxis(vals, axis, 0).reshape((idx.size,) + out.shape[1:])
    for j, i in enumerate(_norm_idx(idx.reshape(-1), dst.shape[axis], attrs["mode"])):
        out[i] = v[j]  # sequential: the last position wins
    return [np.ascontiguousarray(np.moveaxis(out, 0, axis))]


def _scatter_add_ref(xs, attrs):
    dst, idx, vals = xs
    axis = attrs["axis"] % dst.ndim
    out = dst.copy()
    full = (slice(None),) * axis + (_norm_idx(idx, dst.shape[axis], "raise"),)
    np.add.at(out, full, vals)
    return [out]


def _sort_infer(op, result_dtype):
    def infer(types, attrs):
        x = types[0]
        _axis(op, x, attrs["axis"])
        require_dtype(op, x, SORTABLE, "operand")
        return [x if result_dtype is None else x.with_dtype(result_dtype)]
    return infer


def _argsort_1d(x, descending):
    if not descending:
        return np.argsort(x, kind="stable")
    if x.dtype.kind == "f":
        nan = np.isnan(x)
        key = np.where(nan, 0, -x.astype(np.float64))
        return np.lexsort((np.arange(x.size), key, nan))
    return np.argsort(~x, kind="stable")  # ~x reverses signed and unsigned order exactly


def _argsort(x, attrs):
    axis = attrs["axis"] % x.ndim
    desc = bool(attrs["descending"])
    if x.size == 0:
        return np.zeros(x.shape, np.int64)
    return np.apply_along_axis(_argsort_1d, axis, x, desc)


def _sort_ref(xs, attrs):
    x = xs[0]
    axis = attrs["axis"] % x.ndim
    return [np.take_along_axis(x, _argsort(x, attrs), axis=axis)]


def _argsort_ref(xs, attrs):
    return [_argsort(xs[0], attrs).astype(np.int32)]


def _random_infer(types, attrs):
    op = "tensor.random_uniform"
    shape = tuple(attrs["shape"])
    if any(s < 0 for s in shape):
        raise fail(op, f"shape extents must be >= 0, got {list(shape)}")
    dtype = DType.parse(attrs["dtype"])
    require_dtype(op, TensorType(dtype, ()), FLOATS, "result")
    if not 0 <= attrs["seed"] < 2**64 or not 0 <= attrs["offset"] < 2**62:
        raise fail(op, f"seed must be in [0, 2**64) and offset in [0, 2**62), got seed "
                   f"{attrs['seed']}, offset {attrs['offset']}")
    if attrs["algorithm"] not in ALGORITHMS:
        raise fail(op, f"unknown algorithm {attrs['algorithm']!r}; known: "
                   f"{', '.join(ALGORITHMS)}")
    return [TensorType(dtype, shape)]


def philox_uniform_host(size, seed, dtype, rounds, offset, low, high):
    """The ``random`` family's uniform stream for Philox4x32 in numpy (see
    ``accy_kernels.random.generators``): element ``i`` comes from block ``offset + i // 4``
    (f32, one word each) or ``offset + i // 2`` (f64, two words each)."""
    from accy.families.philox import philox4x32_host

    per_block = 4 if dtype == "f32" else 2
    blocks = -(-size // per_block)
    b = np.arange(blocks, dtype=np.uint64) + np.uint64(offset)
    ctr = np.zeros((blocks, 4), np.uint32)
    ctr[:, 0] = (b & np.uint64(0xFFFFFFFF)).astype(np.uint32)
    ctr[:, 1] = (b >> np.uint64(32)).astype(np.uint32)
    key = np.array([[seed & 0xFFFFFFFF, seed >> 32]], np.uint32).repeat(blocks, axis=0)
    words = philox4x32_host(ctr, key, rounds).reshape(-1)
    if dtype == "f32":
        u = (words[:size] >> np.uint32(8)).astype(np.float32) * np.float32(2.0**-24)
        return u * np.float32(high - low) + np.float32(low)
    a = (words[0::2][:size] >> np.uint32(5)).astype(np.float64)
    c = (words[1::2][:size] >> np.uint32(6)).astype(np.float64)
    return (a * 67108864.0 + c) * 2.0**-53 * (high - low) + low


def _random_ref(xs, attrs):
    dtype = DType.parse(attrs["dtype"])
    shape = tuple(attrs["shape"])
    size = math.prod(shape)
    algo = attrs["algorithm"]
    low, high = float(attrs["low"]), float(attrs["high"])
    if algo.startswith("philox"):
        out = philox_uniform_host(size, int(attrs["seed"]), dtype.value, int(algo[-2:].strip("-")),
                                  int(attrs["offset"]), low, high)
    else:  # the other generators' stream is defined by the family itself
        try:
            from accy_kernels import random as family
        except ImportError:
            from accy.errors import UnsupportedError

            raise UnsupportedError(f"random_uniform: no host reference for {algo!r} without "
                                   "accy-kernels; use a philox algorithm",
                                   feature="random") from None
        out = family.uniform(shape, attrs["seed"], dtype.value, algo, low=low, high=high,
                             offset=attrs["offset"])
    return [np.asarray(out, dtype=dtype.numpy).reshape(shape)]


def _segment_infer(types, attrs):
    op = "tensor.segment_sum"
    vals, ids = types
    if vals.rank == 0 or ids.shape != vals.shape[:1]:
        raise fail(op, f"segment_ids must have shape (n,) = values.shape[:1], got {ids} for "
                   f"values {vals}")
    _indices(op, ids)
    require_dtype(op, vals, ADDABLE, "values")
    if attrs["num_segments"] < 0:
        raise fail(op, f"num_segments must be >= 0, got {attrs['num_segments']}")
    return [vals.with_shape((attrs["num_segments"],) + vals.shape[1:])]


def _segment_ref(xs, attrs):
    vals, ids = xs
    k = attrs["num_segments"]
    if ids.size and (ids.min() < 0 or ids.max() >= k):
        raise IndexError(f"segment_sum: segment id out of range [0, {k})")
    out = np.zeros((k,) + vals.shape[1:], vals.dtype)
    np.add.at(out, ids.astype(np.int64), vals)
    return [out]


def _register(ns: str) -> None:
    p = f"{ns}."
    call = "kernel-library call: " if ns == "library" else ""
    register_op(OpDef(p + "gather", 2, _gather_infer(p + "gather"), _gather_ref,
                      attrs={"axis": "int"}, optional_attrs={"mode": ("str", "raise")},
                      summary=call + "numpy.take(src, indices, axis, mode)"))
    register_op(OpDef(p + "scatter", 3, _scatter_infer(p + "scatter", NUMERIC), _scatter_ref,
                      attrs={"axis": "int"}, optional_attrs={"mode": ("str", "raise")},
                      summary=call + "copy of dst with values written at indices (last wins)"))
    register_op(OpDef(p + "scatter_add", 3, _scatter_infer(p + "scatter_add", ADDABLE),
                      _scatter_add_ref, attrs={"axis": "int"},
                      summary=call + "numpy.add.at on a copy of dst"))
    register_op(OpDef(p + "sort", 1, _sort_infer(p + "sort", None), _sort_ref,
                      attrs={"axis": "int"}, optional_attrs={"descending": ("bool", False)},
                      summary=call + "stable sort along an axis"))
    register_op(OpDef(p + "argsort", 1, _sort_infer(p + "argsort", DType.I32), _argsort_ref,
                      attrs={"axis": "int"}, optional_attrs={"descending": ("bool", False)},
                      summary=call + "stable sorting permutation (i32) along an axis"))
    register_op(OpDef(p + "random_uniform", 0, _random_infer, _random_ref,
                      attrs={"shape": "ints", "dtype": "dtype", "seed": "int"},
                      optional_attrs={"offset": ("int", 0), "low": ("float", 0.0),
                                      "high": ("float", 1.0),
                                      "algorithm": ("str", "philox4x32-10")},
                      summary=call + "uniform floats from the counter stream (seed, offset)"))
    register_op(OpDef(p + "segment_sum", 2, _segment_infer, _segment_ref,
                      attrs={"num_segments": "int"},
                      summary=call + "sum rows of values by segment id"))


_register("tensor")
_register("library")
