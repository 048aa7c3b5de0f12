"""Hypothesis strategy for random tensor programs built through accy's :class:`Builder`.

A program is a random DAG over a pool of values (parameters, constants, op results):
elementwise unary/binary/compare ops (with numpy broadcasting and Python scalars),
``select``, ``cast``, reductions, ``matmul``, ``reshape``/``transpose``/``slice``, a concat
(``pad`` + ``pad`` + ``select`` on an ``iota`` mask: the IR has no concat op), ``softmax``
and the kernel-library ``sort``/``argsort``, over f32/f64/i32/i64/bool, empty extents
included. Inputs mix ordinary values with the special ones (±0, ±inf, NaN, huge, tiny,
INT_MIN/INT_MAX, −1 divisors).

:class:`Options` holds what a backend cannot run by declaration (Vulkan: no f64 math);
everything else is generated on every backend, float -> int casts and IEEE special values
(±0, ±inf, NaN, denormals) included.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from accy.errors import VerifyError
from accy.ir import Builder, Module
from hypothesis import strategies as st

FLOATS = ("f32", "f64")
INTS = ("i32", "i64")
DTYPES = FLOATS + INTS + ("bool",)
DIMS = (2, 3, 4, 5, 7, 8, 1, 16, 61)
MAX_SIZE = 128


@dataclass(frozen=True)
class Options:
    """What the generator may emit for one backend (its declared capabilities)."""

    f64_math: bool = True
    library: bool = True


@dataclass
class Program:
    """A built module plus one set of inputs for it."""

    module: Module
    inputs: list[np.ndarray]

    def describe(self) -> str:
        lines = [self.module.to_text()]
        for i, x in enumerate(self.inputs):
            lines.append(f"input #{i}: {x.dtype}{list(x.shape)} = {x.tolist()!r}")
        return "\n".join(lines)


class _Skip(Exception):
    """This step cannot be built from the current pool; draw another."""


def _specials(dtype: str) -> list:
    if dtype == "bool":
        return [True, False]
    if dtype in INTS:
        info = np.iinfo(dtype.replace("i", "int"))
        return [0, 1, -1, 2, -2, 7, info.min, info.max, info.min + 1]
    info = np.finfo(np.float32 if dtype == "f32" else np.float64)
    return [0.0, 1.0, -1.0, 0.5, 3.0, -2.5,
            -0.0, np.inf, -np.inf, np.nan, float(info.max), -float(info.max) / 2,
            1e30 if dtype == "f32" else 1e300, float(info.tiny),
            float(info.smallest_subnormal) * 3, -float(info.smallest_subnormal)]


def _array(draw, dtype: str, shape: tuple[int, ...], opts: Options) -> np.ndarray:
    npd = np.bool_ if dtype == "bool" else np.dtype(dtype.replace("f", "float").replace(
        "i", "int"))
    size = int(np.prod(shape, dtype=np.int64))
    seed = draw(st.integers(0, 2**32 - 1), label="values")
    rng = np.random.default_rng(seed)
    specials = np.array(_specials(dtype), dtype=object)
    if dtype == "bool":
        flat = rng.random(size) < 0.5
    elif dtype in INTS:
        flat = rng.integers(-6, 7, size).astype(object)
    else:
        flat = np.round(rng.standard_normal(size) * 4, 1).astype(object)
    pick = rng.random(size) < 0.3
    if pick.any() and dtype != "bool":
        flat[pick] = specials[rng.integers(len(specials), size=int(pick.sum()))]
    return np.array(list(flat), dtype=npd).reshape(shape)


def _shape(draw, max_rank: int = 3) -> tuple[int, ...]:
    rank = draw(st.sampled_from([r for r in (1, 2, 2, 3, 0, 1, 3, 2) if r <= max_rank]))
    while True:
        shape = tuple(0 if draw(st.integers(0, 15)) == 0 else draw(st.sampled_from(DIMS))
                      for _ in range(rank))
        if int(np.prod(shape, dtype=np.int64)) <= MAX_SIZE:
            return shape


def _related(draw, base: tuple[int, ...]) -> tuple[int, ...]:
    """``base``, or a shape that broadcasts against it (an axis of 1, fewer leading axes)."""
    form = draw(st.integers(0, 4))
    if form <= 1 or not base:
        return base
    if form == 2:
        return base[draw(st.integers(1, len(base))):]
    k = draw(st.integers(0, len(base) - 1))
    return base[:k] + (1,) + base[k + 1:]


def _compatible(a: tuple[int, ...], b: tuple[int, ...]) -> bool:
    return all(x == y or 1 in (x, y) for x, y in zip(a[::-1], b[::-1], strict=False))


def _pick(draw, pool, pred=lambda v: True):
    cands = [v for v in pool if pred(v)]
    if not cands:
        raise _Skip
    if draw(st.integers(0, 2)):  # mostly recent values: long chains, not a flat DAG
        cands = cands[-2:]
    return draw(st.sampled_from(cands))


def _dt(v) -> str:
    return v.type.dtype.value


def _partner(draw, fb, pool, a, opts: Options):
    """A second operand for ``a``: a broadcast-compatible pool value of a's dtype, a Python
    scalar, or a pool value cast to a's dtype."""
    choice = draw(st.integers(0, 3))
    dt = _dt(a)
    if choice == 0 and dt != "bool":
        return draw(st.sampled_from(_specials(dt)))
    same = [v for v in pool if _dt(v) == dt and _compatible(v.type.shape, a.type.shape)]
    if same and choice != 3:
        return draw(st.sampled_from(same))
    other = _pick(draw, pool, lambda v: _compatible(v.type.shape, a.type.shape))
    return fb.cast(other, dt)


def _float_ok(v, opts: Options) -> bool:
    return _dt(v) == "f32" or (_dt(v) == "f64" and opts.f64_math)


_FLOAT_UNARY = ("neg", "abs", "exp", "log", "sqrt", "rsqrt", "tanh", "sigmoid", "sin", "cos",
                "relu", "gelu")
_MATH = {"exp", "log", "sqrt", "rsqrt", "tanh", "sigmoid", "sin", "cos", "gelu"}


def _unary(draw, fb, pool, opts):
    a = _pick(draw, pool)
    dt = _dt(a)
    if dt in FLOATS:
        names = [n for n in _FLOAT_UNARY if n not in _MATH or _float_ok(a, opts)]
    elif dt in INTS:
        names = ["neg", "abs", "not_"]
    else:
        names = ["not_"]
    return getattr(fb, draw(st.sampled_from(names)))(a)


def _binary(draw, fb, pool, opts):
    a = _pick(draw, pool)
    dt = _dt(a)
    if dt in FLOATS:
        names = ["add", "sub", "mul", "div", "max", "min"] + (["pow"] if _float_ok(a, opts) else [])
    elif dt in INTS:
        names = ["add", "sub", "mul", "div", "max", "min", "and_", "or_", "xor"]
    else:
        names = ["and_", "or_", "xor"]
    name = draw(st.sampled_from(names))
    b = _partner(draw, fb, pool, a, opts)
    if draw(st.booleans()) and not isinstance(b, (int, float, bool)):
        a, b = b, a
    return getattr(fb, name)(a, b)


def _compare(draw, fb, pool, opts):
    a = _pick(draw, pool, lambda v: _dt(v) != "bool")
    b = _partner(draw, fb, pool, a, opts)
    return getattr(fb, draw(st.sampled_from(["eq", "ne", "lt", "le", "gt", "ge"])))(a, b)


def _select(draw, fb, pool, opts):
    a = _pick(draw, pool)
    b = _partner(draw, fb, pool, a, opts)
    shape = np.broadcast_shapes(a.type.shape, getattr(getattr(b, "type", None), "shape", ()))
    conds = [v for v in pool if _dt(v) == "bool" and _compatible(v.type.shape, shape)]
    if conds and draw(st.booleans()):
        c = draw(st.sampled_from(conds))
    else:
        src = _pick(draw, pool, lambda v: _dt(v) != "bool" and _compatible(v.type.shape, shape))
        c = fb.gt(src, draw(st.sampled_from(_specials(_dt(src))[:6])))
    return fb.select(c, a, b)


def _cast(draw, fb, pool, opts):
    a = _pick(draw, pool)
    dst = draw(st.sampled_from(DTYPES))
    return fb.cast(a, dst)


def _reduce(draw, fb, pool, opts):
    a = _pick(draw, pool, lambda v: _dt(v) != "bool")
    kinds = ["sum", "max", "min"] + (["mean"] if _dt(a) in FLOATS else [])
    kind = draw(st.sampled_from(kinds))
    rank = a.type.rank
    axes = draw(st.lists(st.integers(0, max(rank - 1, 0)), max_size=rank, unique=True)) if rank \
        else []
    if draw(st.integers(0, 3)) == 0:
        axes = None
    reduced = range(rank) if axes is None else axes
    if kind in ("max", "min") and any(a.type.shape[x] == 0 for x in reduced):
        raise _Skip
    return getattr(fb, f"reduce_{kind}")(a, axes, keepdims=draw(st.booleans()))


def _matrix(fb, a):
    if a.type.rank == 2:
        return a
    n = int(np.prod(a.type.shape, dtype=np.int64))
    return fb.reshape(a, (1, n) if a.type.rank % 2 else (n, 1))


def _matmul(draw, fb, pool, opts):
    a = _matrix(fb, _pick(draw, pool, lambda v: _dt(v) in FLOATS + INTS))
    m, k = a.type.shape
    form = draw(st.integers(0, 2))
    if form == 0:
        return fb.matmul(fb.transpose(a, (1, 0)), a)
    if form == 1:
        return fb.matmul(a, fb.transpose(a, (1, 0)))
    n = draw(st.sampled_from([1, 2, 3]))
    c = fb.constant(fb_type(_dt(a), (k, n)), _array(draw, _dt(a), (k, n), opts))
    return fb.matmul(a, c)


def fb_type(dtype: str, shape):
    return Builder.tensor(dtype, shape)


def _reshape(draw, fb, pool, opts):
    a = _pick(draw, pool)
    shape = a.type.shape
    n = int(np.prod(shape, dtype=np.int64))
    options = [(n,), shape[::-1], (1,) + shape, shape + (1,)]
    divisors = [d for d in range(2, 9) if n and n % d == 0]
    options += [(d, n // d) for d in divisors]
    if n == 0:
        options += [(0, 3), (2, 0)]
    return fb.reshape(a, draw(st.sampled_from(options)))


def _transpose(draw, fb, pool, opts):
    a = _pick(draw, pool, lambda v: v.type.rank >= 2)
    return fb.transpose(a, draw(st.permutations(range(a.type.rank))))


def _slice(draw, fb, pool, opts):
    a = _pick(draw, pool, lambda v: v.type.rank >= 1)
    start, limit = [], []
    for n in a.type.shape:
        lo = draw(st.integers(0, n))
        start.append(lo)
        limit.append(draw(st.integers(lo if draw(st.integers(0, 7)) == 0 else min(lo + 1, n),
                                      n)))
    return fb.slice(a, start, limit)


def _concat(draw, fb, pool, opts):
    a = _pick(draw, pool, lambda v: v.type.rank >= 1 and _dt(v) != "bool")
    axis = draw(st.integers(0, a.type.rank - 1))

    def fits(v):
        return (_dt(v) == _dt(a) and v.type.rank == a.type.rank
                and all(x == y for i, (x, y) in enumerate(zip(v.type.shape, a.type.shape,
                                                              strict=True)) if i != axis))

    b = _pick(draw, pool, fits)
    na, nb = a.type.shape[axis], b.type.shape[axis]
    zeros = [0] * a.type.rank
    hi = list(zeros)
    hi[axis] = nb
    lo = list(zeros)
    lo[axis] = na
    pa, pb = fb.pad(a, zeros, hi), fb.pad(b, lo, zeros)
    mask = fb.lt(fb.iota(pa.type.with_dtype(_i32()), axis), na)
    return fb.select(mask, pa, pb)


def _i32():
    from accy.ir import DType

    return DType.I32


def _softmax(draw, fb, pool, opts):
    a = _pick(draw, pool, lambda v: v.type.rank >= 1 and _dt(v) in FLOATS and _float_ok(v, opts))
    return fb.softmax(a, draw(st.integers(-a.type.rank, a.type.rank - 1)))


def _sort(draw, fb, pool, opts):
    if not opts.library:
        raise _Skip
    a = _pick(draw, pool, lambda v: v.type.rank >= 1 and _dt(v) in FLOATS + INTS)
    axis = draw(st.integers(-a.type.rank, a.type.rank - 1))
    fn = fb.argsort if draw(st.booleans()) else fb.sort
    return fn(a, axis=axis, descending=draw(st.booleans()))


def _constant(draw, fb, pool, opts):
    dt = draw(st.sampled_from(DTYPES))
    shape = _shape(draw)
    return fb.constant(fb_type(dt, shape), _array(draw, dt, shape, opts))


STEPS = {
    "unary": _unary, "binary": _binary, "compare": _compare, "select": _select,
    "cast": _cast, "reduce": _reduce, "matmul": _matmul, "reshape": _reshape,
    "transpose": _transpose, "slice": _slice, "concat": _concat, "softmax": _softmax,
    "sort": _sort, "constant": _constant,
}
_WEIGHTED = (["unary", "binary"] * 3 + ["compare", "select", "cast", "cast", "reduce", "reduce",
                                         "matmul", "reshape", "transpose", "slice", "slice",
                                         "concat", "softmax", "sort", "constant"]
             + ["reduce", "matmul", "softmax", "sort", "cast"])


@st.composite
def programs(draw, opts: Options = Options(), max_steps: int = 12) -> Program:
    """A random :class:`Program` (module + inputs) within ``opts``."""
    b = Builder()
    base = _shape(draw)
    types = [fb_type(draw(st.sampled_from(DTYPES)), _related(draw, base))
             for _ in range(draw(st.integers(1, 3)))]
    fb = b.begin_function("f", params=types)
    pool = list(fb.function.params)
    for _ in range(draw(st.integers(min(3, max_steps), max_steps))):
        step = draw(st.sampled_from(_WEIGHTED))
        try:
            v = STEPS[step](draw, fb, pool, opts)
        except _Skip:
            continue
        except VerifyError as e:
            raise AssertionError(f"generator built an invalid {step} step: {e}") from e
        pool.append(v)
    fresh = pool[len(types):] or pool
    outs = [fresh[-1]] + draw(st.lists(st.sampled_from(fresh if draw(st.booleans()) else pool),
                                       max_size=2))
    fb.return_(*outs)
    fb.finish()
    module = b.finish()
    inputs = [_array(draw, t.dtype.value, t.shape, opts) for t in types]
    return Program(module, inputs)
