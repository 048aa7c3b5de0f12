"""Index arithmetic and tensor-op → kernel-expression rules used by kernel outlining.

An :class:`Index` names one element of a tensor of a given shape, either by its row-major
linear position, by its per-axis components, or both; index maps (broadcast, transpose,
reshape) turn the index of a result into the index of an operand without moving data.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from functools import partial

import numpy as np

from accy.errors import UnsupportedError
from accy.kernel import Binary, Cast, Const, Expr, Select, Unary
from accy.kernel.ir import INT_DTYPES, NUMPY_DTYPES, UNSIGNED_DTYPES

__all__ = ["IDX", "Index", "combine", "const_i", "elementwise_expr", "identity"]

#: dtype of index arithmetic inside kernels.
IDX = "i32"
MAX_ELEMS = 2**31 - 1


def const_i(v: int) -> Expr:
    return Const(int(v), IDX)


def _bin(op: str, a: Expr, b: Expr) -> Expr:
    dtype = "bool" if op in ("eq", "ne", "lt", "le", "gt", "ge") else a.dtype
    return Binary(op, a, b, dtype)


def _mul_i(a: Expr, k: int) -> Expr:
    return a if k == 1 else _bin("mul", a, const_i(k))


def _add_i(a: Expr | None, b: Expr) -> Expr:
    if a is None:
        return b
    if isinstance(b, Const) and b.value == 0:
        return a
    return _bin("add", a, b)


def check_size(n: int, what: str) -> None:
    if n > MAX_ELEMS:
        raise UnsupportedError(
            f"{what}: {n} elements exceed the 2**31-1 elements one kernel indexes; "
            "split the tensor",
            feature="large-tensor",
        )


class Index:
    """An element of a tensor of ``shape``: linear position and/or per-axis components."""

    __slots__ = ("_comps", "_linear", "shape")

    def __init__(self, shape: Sequence[int], comps: Sequence[Expr] | None = None,
                 linear: Expr | None = None) -> None:
        self.shape = tuple(shape)
        self._comps = tuple(comps) if comps is not None else None
        self._linear = linear

    @property
    def comps(self) -> tuple[Expr, ...]:
        if self._comps is None:
            lin, out, stride = self._linear, [], 1
            strides = []
            for s in reversed(self.shape):
                strides.append(stride)
                stride *= s
            strides.reverse()
            for k, (s, st) in enumerate(zip(self.shape, strides, strict=True)):
                if s == 1:
                    out.append(const_i(0))
                    continue
                e = lin if st == 1 else _bin("div", lin, const_i(st))
                out.append(e if k == 0 else _bin("rem", e, const_i(s)))
            self._comps = tuple(out)
        return self._comps

    @property
    def linear(self) -> Expr:
        if self._linear is None:
            lin: Expr | None = None
            stride = 1
            for c, s in zip(reversed(self.comps), reversed(self.shape), strict=True):
                if s != 1:
                    lin = _add_i(lin, _mul_i(c, stride))
                stride *= s
            self._linear = lin if lin is not None else const_i(0)
        return self._linear

    def key(self) -> object:
        return (self.shape, self._linear if self._linear is not None else self.comps)

    def broadcast_from(self, src_shape: tuple[int, ...]) -> Index:
        """Index into ``src_shape`` that numpy broadcasting maps to this element."""
        if src_shape == self.shape:
            return self
        if math.prod(src_shape) == 1:
            return Index(src_shape, linear=const_i(0))
        lead = len(self.shape) - len(src_shape)
        comps = [const_i(0) if s == 1 else self.comps[k + lead] for k, s in enumerate(src_shape)]
        return Index(src_shape, comps=comps)

    def transpose_from(self, src_shape: tuple[int, ...], perm: Sequence[int]) -> Index:
        comps: list[Expr] = [const_i(0)] * len(src_shape)
        for i, p in enumerate(perm):
            comps[p] = self.comps[i]
        return Index(src_shape, comps=comps)

    def reshape_from(self, src_shape: tuple[int, ...]) -> Index:
        """Index into ``src_shape`` of this element of a ``tensor.reshape`` from it.

        With per-axis components, axes are matched in groups of equal extent products
        (unit axes dropped or added, ``(40, 60) -> (2400,)`` merged, the reverse split), so
        a reshape that only adds or removes unit axes costs no arithmetic and a merge or
        split only that group's; the linear position is this element's own (no div/rem to
        recombine); otherwise (or with an empty axis) through the linear position."""
        if self._comps is None or 0 in self.shape or 0 in src_shape:
            return Index(src_shape, linear=self.linear)
        mine = [(c, n) for c, n in zip(self.comps, self.shape, strict=True) if n != 1]
        theirs = [n for n in src_shape if n != 1]
        got: list[Expr] = []
        i = j = 0
        while i < len(mine) and j < len(theirs):
            dst, src = [mine[i]], [theirs[j]]
            pd, ps = mine[i][1], theirs[j]
            i, j = i + 1, j + 1
            while pd != ps:
                if pd < ps and i < len(mine):
                    dst.append(mine[i])
                    pd, i = pd * mine[i][1], i + 1
                elif ps < pd and j < len(theirs):
                    src.append(theirs[j])
                    ps, j = ps * theirs[j], j + 1
                else:  # not a reshape of equal size: the linear position decides
                    return Index(src_shape, linear=self.linear)
            if len(dst) == 1 and len(src) == 1:
                got.append(dst[0][0])
                continue
            lin = Index(tuple(n for _, n in dst), comps=[c for c, _ in dst]).linear
            got.extend(Index(tuple(src), linear=lin).comps)
        if i != len(mine) or j != len(theirs):
            return Index(src_shape, linear=self.linear)
        it = iter(got)
        # the linear position stays this one's (a load of the source needs no recombination
        # of a merged group's div/rem: (64, 262144) -> (4096, 4096) of a sum's split)
        return Index(src_shape, comps=[const_i(0) if n == 1 else next(it) for n in src_shape],
                     linear=self.linear)

    def slice_from(self, src_shape: tuple[int, ...], start: Sequence[int]) -> Index:
        """Index into ``src_shape`` of this element of ``tensor.slice {start}``."""
        comps = [_add_i(c, const_i(s)) for c, s in zip(self.comps, start, strict=True)]
        return Index(src_shape, comps=comps)

    def pad_from(self, src_shape: tuple[int, ...], low: Sequence[int]) -> tuple[Index, Expr | None]:
        """(clamped index into ``src_shape``, in-range predicate or None when always in range).

        The clamped index is always inside the operand, so loading it never reads out of
        bounds; the caller selects the pad value where the predicate is false.
        """
        comps: list[Expr] = []
        inside: Expr | None = None
        for c, lo, n in zip(self.comps, low, src_shape, strict=True):
            shifted = _bin("sub", c, const_i(lo)) if lo else c
            if n == 0:
                return Index(src_shape, comps=[const_i(0)] * len(src_shape)), Const(False, "bool")
            ok = _bin("and", _bin("ge", shifted, const_i(0)), _bin("lt", shifted, const_i(n)))
            inside = ok if inside is None else _bin("and", inside, ok)
            comps.append(_bin("min", _bin("max", shifted, const_i(0)), const_i(n - 1)))
        return Index(src_shape, comps=comps), inside


def _float_max(a: Expr, b: Expr, cmp: str) -> Expr:
    """NaN-propagating max/min (numpy.maximum semantics)."""
    pick_b = _bin("or", _bin(cmp, b, a), _bin("ne", b, b))
    return Select(pick_b, b, a, a.dtype)


def _int_div(a: Expr, b: Expr) -> Expr:
    """Truncating division; x/0 = 0 and MIN/-1 wraps, and the hardware never sees either."""
    zero = Const(0, a.dtype)
    is_zero = _bin("eq", b, zero)
    if a.dtype in UNSIGNED_DTYPES:
        return Select(is_zero, zero, _bin("div", a, Select(is_zero, Const(1, a.dtype), b, a.dtype)),
                      a.dtype)
    minus_one = _bin("eq", b, Const(-1, a.dtype))
    safe = Select(_bin("or", is_zero, minus_one), Const(1, a.dtype), b, a.dtype)
    q = Select(minus_one, _bin("sub", zero, a), _bin("div", a, safe), a.dtype)
    return Select(is_zero, zero, q, a.dtype)


def _div(a: Expr, b: Expr) -> Expr:
    return _bin("div", a, b) if a.dtype in ("f32", "f64") else _int_div(a, b)


def _maxmin(cmp: str, iop: str) -> Callable[[Expr, Expr], Expr]:
    def f(a: Expr, b: Expr) -> Expr:
        return _float_max(a, b, cmp) if a.dtype in ("f32", "f64") else _bin(iop, a, b)
    return f


def _pow(x: Expr, y: Expr) -> Expr:
    """IEEE 754 / C99 ``pow`` (numpy's semantics) from a ``pow`` trusted only for x > 0.

    GPU math libraries (GLSL.std.450 ``Pow``, PTX approximations) leave x <= 0, NaN and
    ±1 edge cases undefined; this wraps them so every backend agrees with numpy: x < 0 with
    an integer y gives ±|x|^y (sign from y's parity), with a non-integer y NaN; pow(±0, y)
    is ±0 or ±inf; pow(1, y) = pow(-1, ±inf) = 1; pow(x, ±0) = 1; other NaNs propagate.
    """
    d = x.dtype
    zero, one = Const(0.0, d), Const(1.0, d)
    inf, nan = Const(float("inf"), d), Const(float("nan"), d)
    ax, ay = Unary("abs", x, d), Unary("abs", y, d)
    mag = _bin("pow", ax, y)
    y_int = _bin("eq", Unary("floor", y, d), y)
    half = _bin("mul", y, Const(0.5, d))
    y_odd = _bin("and", y_int, _bin("ne", Unary("floor", half, d), half))
    x_zero = _bin("eq", x, zero)
    neg_zero = _bin("and", x_zero, _bin("lt", _bin("div", one, x), zero))
    x_signed = _bin("or", _bin("lt", x, zero), neg_zero)
    flip = _bin("and", x_signed, y_odd)
    r = Select(flip, Unary("neg", mag, d), mag, d)
    finite_fraction = _bin("and", _bin("ne", ax, inf), Unary("not", y_int, "bool"))
    bad_base = _bin("and", _bin("lt", x, zero), finite_fraction)
    r = Select(bad_base, nan, r, d)
    at_zero = Select(_bin("lt", y, zero), inf, zero, d)
    r = Select(x_zero, Select(flip, Unary("neg", at_zero, d), at_zero, d), r, d)
    r = Select(_bin("or", _bin("ne", x, x), _bin("ne", y, y)), nan, r, d)
    minus_one_inf = _bin("and", _bin("eq", ax, one), _bin("eq", ay, inf))
    unit = _bin("or", _bin("eq", x, one), minus_one_inf)
    r = Select(unit, one, r, d)
    return Select(_bin("eq", y, zero), one, r, d)


def _sigmoid(x: Expr) -> Expr:
    one = Const(1.0, x.dtype)
    return _bin("div", one, _bin("add", one, Unary("exp", Unary("neg", x, x.dtype), x.dtype)))


def _neg(x: Expr) -> Expr:
    return Unary("neg", x, x.dtype)


_BINARY: dict[str, Callable[[Expr, Expr], Expr]] = {
    "arith.add": lambda a, b: _bin("add", a, b),
    "arith.sub": lambda a, b: _bin("sub", a, b),
    "arith.mul": lambda a, b: _bin("mul", a, b),
    "arith.div": _div,
    "arith.max": _maxmin("gt", "max"),
    "arith.min": _maxmin("lt", "min"),
    "arith.pow": lambda a, b: _pow(a, b),
    "arith.rem": lambda a, b: _bin("rem", a, b),
    "arith.and": lambda a, b: _bin("and", a, b),
    "arith.or": lambda a, b: _bin("or", a, b),
    "arith.xor": lambda a, b: _bin("xor", a, b),
}
for _c in ("eq", "ne", "lt", "le", "gt", "ge"):
    _BINARY[f"arith.{_c}"] = partial(_bin, _c)
_UNARY: dict[str, Callable[[Expr], Expr]] = {
    "arith.neg": _neg,
    "arith.abs": lambda x: Unary("abs", x, x.dtype),
    "arith.not": lambda x: Unary("not", x, x.dtype),
    "math.sigmoid": _sigmoid,
}


def _unary(name: str, x: Expr) -> Expr:
    return Unary(name, x, x.dtype)


for _n in ("exp", "log", "sqrt", "rsqrt", "tanh", "sin", "cos"):
    _UNARY[f"math.{_n}"] = partial(_unary, _n)


def elementwise_expr(op_name: str, args: Sequence[Expr], attrs: dict) -> Expr:
    """Kernel expression of one elementwise tensor op applied to operand expressions."""
    if op_name in _BINARY:
        return _BINARY[op_name](args[0], args[1])
    if op_name in _UNARY:
        return _UNARY[op_name](args[0])
    if op_name == "arith.select":
        return Select(args[0], args[1], args[2], args[1].dtype)
    if op_name == "arith.cast":
        dtype = str(attrs["dtype"])
        return args[0] if args[0].dtype == dtype else Cast(args[0], dtype)
    raise UnsupportedError(f"'{op_name}' op cannot be fused into a kernel", feature=op_name)


_INT_LIMITS = {d: (int(np.iinfo(NUMPY_DTYPES[d]).min), int(np.iinfo(NUMPY_DTYPES[d]).max))
               for d in INT_DTYPES}


def identity(kind: str, dtype: str) -> Expr:
    """Identity element of reduction ``kind`` (sum, max, min) for ``dtype``."""
    if kind == "sum":
        return Const(0.0 if dtype in ("f32", "f64") else 0, dtype)
    if dtype in ("f32", "f64"):
        return Const(float("-inf") if kind == "max" else float("inf"), dtype)
    lo, hi = _INT_LIMITS[dtype]
    return Const(lo if kind == "max" else hi, dtype)


def combine(kind: str, acc: Expr, x: Expr) -> Expr:
    """acc ⊕ x for reduction ``kind``; float max/min propagate NaN like numpy."""
    if kind == "sum":
        return _bin("add", acc, x)
    if kind == "max":
        return _maxmin("gt", "max")(acc, x)
    return _maxmin("lt", "min")(acc, x)
