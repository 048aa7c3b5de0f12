"""Counter-based random numbers keyed by ``(seed, offset)``, the same stream on every backend.

The raw bijections, ``uniform`` and ``integers`` are bit-identical on every backend and
launch geometry (integer arithmetic plus exact conversions). ``normal`` (Box–Muller) uses
the backend's ``log``/``sqrt``/``cos``: it agrees to the device's math accuracy (f32 on
lavapipe: within 2e-6 absolute of the CPU backend), not bit for bit.

Algorithms (``algorithm=``): ``"philox4x32-10"`` (default), ``"philox4x32-7"``,
``"threefry2x32-20"``, ``"threefry2x32-13"``, ``"threefry4x32-20"``, ``"threefry4x32-13"``
(Salmon et al., "Parallel Random Numbers: As Easy as 1, 2, 3", SC'11) and ``"squares"``
(Widynski 2020). The stream layout and the conversions to floats, normals (Box–Muller) and
integers are documented in :mod:`accy_kernels.random.generators`. ``offset`` counts blocks
(one block = one bijection call: 4 words for the ×4 generators, 2 for Threefry2x32, 1 for
Squares), so disjoint requests use disjoint offsets.

Example::

    from accy_kernels import random
    u = random.uniform((1000,), seed=1)                  # f32 in [0, 1)
    z = random.normal((10, 10), seed=1, dtype="f64")
    bits = random.philox4x32(np.zeros((1, 4), np.uint32), np.zeros((1, 2), np.uint32))
"""

from __future__ import annotations

import math
import operator
from typing import Any

import numpy as np
from accy.errors import InputError, UnsupportedError
from accy.families import as_array

__all__ = ["ALGORITHMS", "integers", "normal", "philox4x32", "threefry", "uniform"]

ALGORITHMS = ("philox4x32-10", "philox4x32-7", "threefry2x32-20", "threefry2x32-13",
              "threefry4x32-20", "threefry4x32-13", "squares")


def _int(value: Any, what: str) -> int:
    """``value`` as an exact Python int (ints and numpy integers; no floats, strings, None)."""
    if isinstance(value, (bool, np.bool_)):
        raise InputError(f"random: {what} must be an integer, got {value!r}")
    try:
        return operator.index(value)
    except TypeError:
        raise InputError(f"random: {what} must be an integer, got {type(value).__name__} "
                         f"{value!r}; pass an int") from None


def _size(shape: Any) -> tuple[tuple[int, ...], int]:
    if isinstance(shape, (str, bytes)) or shape is None:
        raise InputError(f"random: shape must be an int or a tuple of ints, got {shape!r}")
    try:
        items = list(shape)
    except TypeError:
        items = None
    shape = (_int(shape, "shape"),) if items is None else tuple(_int(s, "shape extent")
                                                                 for s in items)
    if any(s < 0 for s in shape):
        raise InputError(f"random: shape extents must be >= 0, got {list(shape)}")
    size = math.prod(shape)
    if size > 2**31 - 1:
        raise UnsupportedError(f"random: {size} elements exceed 2**31 - 1; request in parts "
                               f"with increasing offsets", feature="size")
    return shape, size


def _algorithm(algorithm: str) -> str:
    if algorithm not in ALGORITHMS:
        raise InputError(f"random: unknown algorithm {algorithm!r}; known: "
                         f"{', '.join(ALGORITHMS)}")
    return algorithm


def _seed(seed: Any, offset: Any) -> tuple[int, int]:
    seed, offset = _int(seed, "seed"), _int(offset, "offset")
    if not 0 <= seed < 2**64 or not 0 <= offset < 2**62:
        raise InputError(f"random: seed must be in [0, 2**64) and offset in [0, 2**62), got "
                         f"seed={seed}, offset={offset}")
    return seed, offset


def _float_dtype(dtype: Any) -> str:
    names = {"f32": "f32", "f64": "f64", "float32": "f32", "float64": "f64"}
    name = names.get(dtype) if isinstance(dtype, str) else names.get(_dtype_name(dtype))
    if name is None:
        raise UnsupportedError(f"random: float dtype must be f32 or f64, got {dtype!r}",
                               feature=f"dtype {dtype}")
    return name


def _dtype_name(dtype: Any) -> str:
    """numpy's name of a dtype-like (``np.float32`` → ``"float32"``); "" for None and
    anything numpy cannot read (``np.dtype(None)`` would silently mean float64)."""
    if dtype is None:
        return ""
    try:
        return np.dtype(dtype).name
    except (TypeError, ValueError):
        return ""


def _run(dist, shape, seed, dtype, algorithm, offset, p0, p1, backend):
    from accy_kernels.random.generators import run_distribution

    shape, size = _size(shape)
    seed, offset = _seed(seed, offset)
    algorithm = _algorithm(algorithm)
    out = run_distribution(backend, algorithm, dist, dtype, size, seed, offset, p0, p1,
                           _workgroup(backend, algorithm, dist, dtype, size))
    return out.reshape(shape)


def _workgroup(backend: Any, algorithm: str, dist: str, dtype: str, size: int) -> int:
    """The tuning cache's work-group size for this stream (the values never depend on it),
    else 256."""
    from accy.families import backend_object

    from accy_kernels._dispatch import _BY_NAME, note_choice, tuned

    be = backend_object(backend)
    kw = {"algorithm": algorithm, "dist": dist, "dtype": dtype, "size": size}
    _, lookup = tuned("random", be, kw)
    var = _BY_NAME["random"].variant(algorithm.split("-")[0])
    cand = lookup(var)
    note_choice("random", var.name, cand or var.candidates[0], "explicit",
                "cache" if cand else "default")
    return cand.workgroup_size if cand is not None else 256


def _require_f64_math(what: str, backend: Any) -> None:
    from accy.errors import CapabilityError
    from accy.families import backend_object

    be = backend_object(backend)
    if "f64_math" not in be.capabilities().features:
        raise CapabilityError(
            f"{what}: f64 needs f64 log/cos, which backend {be.name!r} lacks (feature f64_math);"
            f" use dtype 'f32', or a backend with f64_math",
            feature="f64_math", backend=be.name, alternative="use dtype 'f32'")


def uniform(shape: Any, seed: int, dtype: str = "f32", algorithm: str = "philox4x32-10", *,
            low: float = 0.0, high: float = 1.0, offset: int = 0,
            backend: Any = "cpu") -> np.ndarray:
    """Return uniform floats in ``[low, high)`` of ``shape`` from the stream ``(seed, offset)``.

    Args:
        shape: output shape (elements); seed: 64-bit key; dtype: ``"f32"`` | ``"f64"``;
        offset: first counter block of the request.

    Raises:
        InputError: unknown algorithm, negative shape, seed or offset out of range.
        UnsupportedError: non-float dtype or more than 2**31 - 1 elements.

    Passes over memory: 1, the output written (minimum 1); as every random distribution.
    """
    dt = _float_dtype(dtype)
    return _run("uniform", shape, seed, dt, algorithm, offset, float(low), float(high - low),
                backend)


def normal(shape: Any, seed: int, dtype: str = "f32", algorithm: str = "philox4x32-10", *,
           mean: float = 0.0, std: float = 1.0, offset: int = 0,
           backend: Any = "cpu") -> np.ndarray:
    """Return normal floats (Box–Muller on pairs of uniforms) of ``shape``.

    f64 needs f64 ``log`` and ``cos``: a backend without the ``f64_math`` feature (Vulkan:
    GLSL.std.450 is 32-bit only) refuses it, since computing them in f32 would leave f64
    results with f32 accuracy (a wrong tail beyond ~5 sigma and 24-bit-grained values).

    Raises:
        InputError, UnsupportedError: as :func:`uniform`.
        CapabilityError: f64 on a backend without ``f64_math`` (before any launch).
    """
    dt = _float_dtype(dtype)
    if dt == "f64":
        _require_f64_math("random.normal", backend)
    return _run("normal", shape, seed, dt, algorithm, offset, float(mean), float(std), backend)


#: integer dtype name -> (kernel dtype it is generated in, numpy dtype returned)
_INT_DTYPES = {
    "i8": ("i32", np.int8), "i16": ("i32", np.int16), "i32": ("i32", np.int32),
    "i64": ("i64", np.int64), "u8": ("i32", np.uint8), "u16": ("i32", np.uint16),
    "u32": ("u32", np.uint32), "u64": ("i64", np.uint64),
}
_NUMPY_INT_NAMES = {"int8": "i8", "int16": "i16", "int32": "i32", "int64": "i64",
                    "uint8": "u8", "uint16": "u16", "uint32": "u32", "uint64": "u64"}


def integers(shape: Any, seed: int, low: int, high: int, dtype: str = "i64",
             algorithm: str = "philox4x32-10", *, offset: int = 0,
             backend: Any = "cpu") -> np.ndarray:
    """Return uniform integers in ``[low, high)`` (``high - low <= 2**32``) of ``shape``.

    Unbiased: Lemire's nearly-divisionless rejection (ACM TOMACS 2019) on 32-bit words of the
    stream, redrawn from reserved counters when rejected, so every value in the range has
    probability exactly ``1 / (high - low)`` and the numbers are bit-identical on every
    backend (see :mod:`accy_kernels.random.generators`). 8- and 16-bit dtypes are drawn in
    32 bits and narrowed (exact: the values are in range).

    Args:
        dtype: ``i8`` | ``i16`` | ``i32`` | ``i64`` | ``u8`` | ``u16`` | ``u32`` | ``u64``
            (or the numpy dtype / name).

    Raises:
        InputError: ``high <= low``, a range above 2**32 or outside ``dtype``.
        UnsupportedError: not an integer dtype.
    """
    key = dtype if isinstance(dtype, str) else _dtype_name(dtype)
    name = _NUMPY_INT_NAMES.get(key, key)
    if name not in _INT_DTYPES:
        raise UnsupportedError(f"random.integers: dtype must be one of "
                               f"{', '.join(_INT_DTYPES)}, got {dtype!r}",
                               feature=f"dtype {dtype}")
    kernel_dt, np_dt = _INT_DTYPES[name]
    low, high = _int(low, "low"), _int(high, "high")
    info = np.iinfo(np_dt)
    if not (high > low and high - low <= 2**32 and low >= info.min and high - 1 <= info.max):
        raise InputError(f"random.integers: need low < high, high - low <= 2**32 and both in "
                         f"{name}'s range, got low={low}, high={high}")
    span = (high - low) & 0xFFFFFFFF  # 0 encodes 2**32
    base = low - (1 << 64) if name == "u64" and low >= 1 << 63 else low  # i64 bits of a u64
    out = _run("integers", shape, seed, kernel_dt, algorithm, offset, base, span, backend)
    if name == "u64":
        return out.view(np.uint64)
    return out.astype(np_dt, copy=False)


def _bijection(algorithm: str, counter: Any, key: Any, width: int, key_width: int,
               backend: Any) -> np.ndarray:
    from accy_kernels.random.generators import run_bijection

    ctr = as_array(counter, f"{algorithm} counter")
    k = as_array(key, f"{algorithm} key")
    if ctr.dtype != np.uint32 or ctr.ndim != 2 or ctr.shape[1] != width:
        raise InputError(f"{algorithm}: counter must be uint32 of shape (N, {width}), got "
                         f"{ctr.dtype} {list(ctr.shape)}")
    if k.dtype != np.uint32 or k.shape not in ((key_width,), (ctr.shape[0], key_width)):
        raise InputError(f"{algorithm}: key must be uint32 of shape ({key_width},) or "
                         f"(N, {key_width}), got {k.dtype} {list(k.shape)}")
    k = np.ascontiguousarray(np.broadcast_to(k, (ctr.shape[0], key_width)))
    if ctr.shape[0] == 0:
        return np.zeros((0, width), np.uint32)
    return run_bijection(backend, algorithm, ctr, k)


def philox4x32(counter: Any, key: Any, rounds: int = 10, *, backend: Any = "cpu") -> np.ndarray:
    """Apply the raw Philox4x32-``rounds`` bijection (rounds 10 or 7).

    Args:
        counter: uint32 ``(N, 4)``; key: uint32 ``(2,)`` or ``(N, 2)``.

    Returns:
        uint32 ``(N, 4)``, equal to Random123's ``philox4x32_R`` (known-answer tested).

    Raises:
        InputError: wrong shapes or dtypes, rounds not 10 or 7.
    """
    if rounds not in (10, 7):
        raise InputError(f"philox4x32: rounds must be 10 or 7, got {rounds}")
    return _bijection(f"philox4x32-{rounds}", counter, key, 4, 2, backend)


def threefry(counter: Any, key: Any, rounds: int = 20, *, backend: Any = "cpu") -> np.ndarray:
    """Apply the raw Threefry-Nx32-``rounds`` bijection, N = 2 or 4 from ``counter.shape``.

    Args:
        counter: uint32 ``(M, 2)`` or ``(M, 4)``; key: uint32 ``(N,)`` or ``(M, N)``;
        rounds: 20 or 13.

    Returns:
        uint32 ``(M, N)``, equal to Random123's ``threefryNx32_R`` (known-answer tested).

    Raises:
        InputError: wrong shapes or dtypes, rounds not 20 or 13.
    """
    ctr = as_array(counter, "threefry counter")
    width = ctr.shape[1] if ctr.ndim == 2 else 0
    if width not in (2, 4) or rounds not in (20, 13):
        raise InputError(f"threefry: counter must be (M, 2) or (M, 4) and rounds 20 or 13, got "
                         f"shape {list(ctr.shape)}, rounds {rounds}")
    return _bijection(f"threefry{width}x32-{rounds}", ctr, key, width, width, backend)
