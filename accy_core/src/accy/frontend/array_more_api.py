"""More of numpy's array functions for ``accy.numpy``, written with existing ops:
``tensordot inner vdot cross kron tile repeat convolve correlate fill_diagonal moveaxis
atleast_1d atleast_2d atleast_3d split array_split select broadcast_arrays identity
searchsorted digitize interp isin``.

Shapes and results are numpy's. ``tile``/``repeat`` with integer counts are broadcasts and
reshapes (they fuse); ``repeat`` with per-element counts (a host array) and ``convolve``
with a long kernel gather with constant indices. ``convolve`` with a kernel of up to 32
taps is a sum of shifted slices (one fused kernel). ``searchsorted``, ``digitize``,
``interp`` and ``isin`` compare every value with every boundary (``O(len(v) * len(a))``
work, no data-dependent control flow), so they suit boundary arrays of up to a few
thousand elements. ``fill_diagonal`` writes into its traced argument as numpy's does.
"""

from __future__ import annotations

import builtins
from typing import Any

import numpy as np

from accy.errors import UnsupportedError, VerifyError
from accy.frontend.indexing import take
from accy.frontend.join_api import stack
from accy.frontend.linalg_api import einsum
from accy.frontend.numpy_api import (
    _axes,
    add,
    astype,
    common,
    divide,
    equal,
    greater_equal,
    less,
    less_equal,
    logical_and,
    logical_not,
    logical_or,
    multiply,
    not_equal,
    shape_of,
    subtract,
    sum,
    trace_of,
    where,
)
from accy.frontend.pad_api import pad
from accy.frontend.predicates_api import any as any_
from accy.frontend.shape_api import broadcast_to, reshape, transpose
from accy.frontend.trace import user_location
from accy.frontend.tracer import Tracer

__all__ = ["array_split", "atleast_1d", "atleast_2d", "atleast_3d", "broadcast_arrays",
           "convolve", "copyto", "correlate", "cross", "digitize", "fill_diagonal", "identity",
           "inner", "interp", "isin", "kron", "moveaxis", "repeat", "searchsorted", "select",
           "split", "tensordot", "tile", "vdot"]

_LETTERS = "abcdefghijklmnopqrstuvwxyz"


def _eager(*xs: Any) -> bool:
    return trace_of(*xs) is None or not builtins.any(isinstance(x, Tracer) for x in xs)


def _err(what: str, why: str) -> VerifyError:
    loc = user_location()
    return VerifyError(f"{what} at {loc}: {why}", position=loc)


# ---------------------------------------------------------------- products
def tensordot(a: Any, b: Any, axes: Any = 2) -> Any:
    """Sum of products over ``axes`` (an int N: the last N of ``a`` with the first N of
    ``b``; or two sequences of axes); shape: ``a``'s free axes then ``b``'s."""
    if _eager(a, b):
        return np.tensordot(a, b, axes)
    ra, rb = len(shape_of(a)), len(shape_of(b))
    if isinstance(axes, (int, np.integer)):
        ax_a, ax_b = list(range(ra - int(axes), ra)), list(range(int(axes)))
    else:
        ax_a, ax_b = ([axes[0]] if isinstance(axes[0], int) else list(axes[0]),
                      [axes[1]] if isinstance(axes[1], int) else list(axes[1]))
    ax_a, ax_b = [x % ra for x in ax_a], [x % rb for x in ax_b]
    if len(ax_a) != len(ax_b) or ra + rb > len(_LETTERS):
        raise _err("tensordot", f"axes {axes!r} do not pair up for ranks {ra} and {rb}")
    la, lb = list(_LETTERS[:ra]), list(_LETTERS[ra:ra + rb])
    for i, j in zip(ax_a, ax_b, strict=True):
        lb[j] = la[i]
    out = [la[i] for i in range(ra) if i not in ax_a] + [lb[j] for j in range(rb)
                                                        if j not in ax_b]
    return einsum(f"{''.join(la)},{''.join(lb)}->{''.join(out)}", a, b)


def inner(a: Any, b: Any) -> Any:
    """Sum of products over the last axes of ``a`` and ``b``."""
    if _eager(a, b):
        return np.inner(a, b)
    if not shape_of(a) or not shape_of(b):
        return multiply(a, b)
    return tensordot(a, b, ([-1], [-1]))


def vdot(a: Any, b: Any) -> Any:
    """Dot product of the flattened arrays (real: no conjugation needed)."""
    if _eager(a, b):
        return np.vdot(a, b)
    return sum(multiply(reshape(a, (-1,)), reshape(b, (-1,))))


def cross(a: Any, b: Any, axis: int = -1) -> Any:
    """Cross product of 3-vectors (or 2-vectors: the z component) along the last axis."""
    if _eager(a, b):
        return np.cross(a, b, axis=axis)
    if axis != -1:
        raise UnsupportedError(f"cross at {user_location()} with axis={axis}: accy takes the "
                               "vectors along the last axis; move it there with "
                               "np.moveaxis(a, axis, -1)", feature="cross axis",
                               alternative="moveaxis")
    na, nb = shape_of(a)[-1], shape_of(b)[-1]
    if na not in (2, 3) or nb not in (2, 3):
        raise _err("cross", f"vectors must have 2 or 3 components, got {na} and {nb}")
    a0, a1 = a[..., 0], a[..., 1]
    b0, b1 = b[..., 0], b[..., 1]
    z = subtract(multiply(a0, b1), multiply(a1, b0))
    if na == 2 and nb == 2:
        return z
    a2 = a[..., 2] if na == 3 else 0.0
    b2 = b[..., 2] if nb == 3 else 0.0
    x = subtract(multiply(a1, b2), multiply(a2, b1))
    y = subtract(multiply(a2, b0), multiply(a0, b2))
    return stack([x, y, z], axis=-1)


def kron(a: Any, b: Any) -> Any:
    """Kronecker product: blocks ``a[i, j] * b``; shape the product of the extents."""
    if _eager(a, b):
        return np.kron(a, b)
    sa, sb = tuple(shape_of(a)), tuple(shape_of(b))
    nd = builtins.max(len(sa), len(sb))
    sa, sb = (1,) * (nd - len(sa)) + sa, (1,) * (nd - len(sb)) + sb
    ea = reshape(a, tuple(x for s in sa for x in (s, 1)))
    eb = reshape(b, tuple(x for s in sb for x in (1, s)))
    return reshape(multiply(ea, eb), tuple(x * y for x, y in zip(sa, sb, strict=True)))


# ---------------------------------------------------------------- repetition
def tile(A: Any, reps: Any) -> Any:
    """``A`` repeated ``reps`` times along each axis (numpy's ``tile``)."""
    if _eager(A):
        return np.tile(A, reps)
    reps = (int(reps),) if isinstance(reps, (int, np.integer)) else tuple(int(r) for r in reps)
    shape = tuple(A.shape)
    nd = builtins.max(len(shape), len(reps))
    shape, reps = (1,) * (nd - len(shape)) + shape, (1,) * (nd - len(reps)) + reps
    x = reshape(A, tuple(x for s in shape for x in (1, s)))
    x = broadcast_to(x, tuple(x for r, s in zip(reps, shape, strict=True) for x in (r, s)))
    return reshape(x, tuple(r * s for r, s in zip(reps, shape, strict=True)))


def repeat(a: Any, repeats: Any, axis: int | None = None) -> Any:
    """Each element of ``a`` repeated ``repeats`` times along ``axis`` (flattened when
    None); ``repeats`` is an int or a host array of one count per element.

    Raises:
        UnsupportedError: traced ``repeats`` (the result length would depend on data).
    """
    if _eager(a, repeats):
        return np.repeat(a, repeats, axis=axis)
    if isinstance(repeats, Tracer):
        raise UnsupportedError(
            f"repeat at {user_location()} with traced counts: the result length would depend "
            "on data; pass the counts as a host array or a static argument",
            feature="repeat traced counts", alternative="host repeats")
    if axis is None:
        a, axis = reshape(a, (-1,)), 0
    ax = _axes(axis, a.ndim)[0]
    n = a.shape[ax]
    r = np.asarray(repeats)
    if r.ndim == 0:
        k = int(r)
        x = reshape(a, a.shape[:ax + 1] + (1,) + a.shape[ax + 1:])
        x = broadcast_to(x, a.shape[:ax + 1] + (k,) + a.shape[ax + 1:])
        return reshape(x, a.shape[:ax] + (n * k,) + a.shape[ax + 1:])
    if r.shape != (n,) or (r < 0).any():
        raise _err("repeat", f"repeats must be one non-negative count per element ({n}), "
                   f"got shape {list(r.shape)}")
    return take(a, np.repeat(np.arange(n), r).astype(np.int32), axis=ax)


# ---------------------------------------------------------------- convolution
def convolve(a: Any, v: Any, mode: str = "full") -> Any:
    """Discrete linear convolution of two 1-D arrays (``mode`` full | same | valid)."""
    if _eager(a, v):
        return np.convolve(a, v, mode=mode)
    if len(shape_of(a)) != 1 or len(shape_of(v)) != 1:
        raise _err("convolve", "needs two 1-D arrays")
    if mode not in ("full", "same", "valid"):
        raise _err("convolve", f"mode must be 'full', 'same' or 'valid', got {mode!r}")
    n, m = shape_of(a)[0], shape_of(v)[0]
    if n == 0 or m == 0:
        raise _err("convolve", "the arrays must not be empty")
    if m > n:  # convolution commutes; numpy swaps too
        a, v, n, m = v, a, m, n
    length = n + m - 1
    ap = pad(a, (m - 1, m - 1)) if m > 1 else a
    if m <= 32:  # shifted slices: out[k] = sum_j ap[k + m - 1 - j] * v[j]
        full = None
        for j in range(m):
            term = multiply(ap[m - 1 - j:m - 1 - j + length], v[j])
            full = term if full is None else add(full, term)
    else:
        idx = (np.arange(length)[:, None] + (m - 1) - np.arange(m)[None, :]).astype(np.int32)
        full = reshape(take(ap, idx, axis=0) @ reshape(v, (m, 1)), (length,))
    if mode == "full":
        return full
    if mode == "same":
        start = (m - 1) // 2
        return full[start:start + n]
    return full[m - 1:n]


def correlate(a: Any, v: Any, mode: str = "valid") -> Any:
    """Cross-correlation of two 1-D real arrays: ``convolve(a, v[::-1], mode)``."""
    if _eager(a, v):
        return np.correlate(a, v, mode=mode)
    n, m = shape_of(a)[0], shape_of(v)[0]
    out = convolve(a, v[::-1], mode)
    return out[::-1] if m > n else out


# ---------------------------------------------------------------- writes and shapes
def copyto(dst: Any, src: Any, casting: str = "same_kind", where: Any = True) -> None:
    """numpy's ``copyto``: write ``src`` (broadcast) into the traced ``dst`` in place, where
    the bool mask ``where`` is true; ``casting`` as numpy's (an f64 ``src`` into an int32
    ``dst`` needs ``casting="unsafe"``).

    Raises:
        VerifyError: ``src``'s dtype cannot be cast under ``casting``.
        UnsupportedError: ``dst`` is a numpy array made inside the jitted function.
    """
    if _eager(dst, src, where) and not isinstance(dst, Tracer):
        np.copyto(dst, src, casting=casting, where=where)
        return
    if not isinstance(dst, Tracer):
        raise UnsupportedError(
            f"copyto at {user_location()} into a numpy array made inside the jitted function "
            "with traced values: make the array traced (np.zeros_like(t))",
            feature="copyto host", alternative="np.zeros_like")
    if isinstance(src, (Tracer, np.ndarray)) and \
            not np.can_cast(src.dtype, dst.dtype, casting=casting):
        raise _err("copyto", f"cannot cast {src.dtype} to {dst.dtype} with casting="
                   f"{casting!r}; pass casting='unsafe' or cast src")
    from accy.frontend.numpy_api import where as select  # the parameter shadows where()

    dst[...] = src if where is True else select(where, src, dst)


def fill_diagonal(a: Any, val: Any, wrap: bool = False) -> None:
    """Write ``val`` (a scalar, or values repeated along the diagonal) into the main
    diagonal of the traced ``a`` in place, as numpy's (``wrap`` for tall matrices).

    Raises:
        VerifyError: ``a`` of rank < 2, or of rank > 2 with unequal extents.
    """
    if _eager(a, val) and not isinstance(a, Tracer):
        np.fill_diagonal(a, val, wrap=wrap)
        return
    if not isinstance(a, Tracer):
        raise UnsupportedError(
            f"fill_diagonal at {user_location()} into a numpy array made inside the jitted "
            "function with traced values: make the array traced (np.zeros_like(t))",
            feature="fill_diagonal host", alternative="np.zeros_like")
    shape = a.shape
    if len(shape) < 2 or (len(shape) > 2 and len(set(shape)) != 1):
        raise _err("fill_diagonal", f"needs a 2-D array or one with equal extents, got "
                   f"{list(shape)}")
    if len(shape) == 2:
        step, end = shape[1] + 1, (None if wrap else shape[1] * shape[1])
    else:
        step, end = 1 + int(np.cumprod(shape[:-1]).sum()), None
    pos = np.arange(a.size)[:end:step].astype(np.int32)
    vshape = shape_of(val)
    if len(vshape) and int(np.prod(vshape)) != len(pos):
        if isinstance(val, Tracer):
            val = take(reshape(val, (-1,)), np.arange(len(pos)) % int(np.prod(vshape)))
        else:
            val = np.resize(np.asarray(val), len(pos))
    elif len(vshape):
        val = reshape(val, (-1,))
    flat = reshape(a, (-1,))  # a view: the write reaches a
    flat[pos] = val


def moveaxis(a: Any, source: Any, destination: Any) -> Any:
    """``a`` with axes ``source`` moved to ``destination`` (the others keep their order)."""
    if _eager(a):
        return np.moveaxis(a, source, destination)
    rank = a.ndim
    src = [int(s) % rank for s in (source if isinstance(source, (list, tuple)) else [source])]
    dst = [int(d) % rank for d in (destination if isinstance(destination, (list, tuple))
                                   else [destination])]
    if len(src) != len(dst):
        raise _err("moveaxis", "source and destination need the same number of axes")
    order = [i for i in range(rank) if i not in src]
    for d, s in sorted(zip(dst, src, strict=True)):
        order.insert(d, s)
    return transpose(a, order)


def _atleast(n: int, arys: tuple) -> Any:
    out = []
    for x in arys:
        s = tuple(shape_of(x))
        if len(s) >= n:
            out.append(x)
        elif n == 3 and len(s) == 1:
            out.append(reshape(x, (1, s[0], 1)))
        elif n == 3 and len(s) == 2:
            out.append(reshape(x, s + (1,)))
        else:
            out.append(reshape(x, (1,) * (n - len(s)) + s))
    return out[0] if len(out) == 1 else out


def atleast_1d(*arys: Any) -> Any:
    """Each array with at least 1 axis."""
    return np.atleast_1d(*arys) if _eager(*arys) else _atleast(1, arys)


def atleast_2d(*arys: Any) -> Any:
    """Each array with at least 2 axes (new ones in front)."""
    return np.atleast_2d(*arys) if _eager(*arys) else _atleast(2, arys)


def atleast_3d(*arys: Any) -> Any:
    """Each array with at least 3 axes (numpy's placement: ``(1, n, 1)``, ``(m, n, 1)``)."""
    return np.atleast_3d(*arys) if _eager(*arys) else _atleast(3, arys)


def array_split(ary: Any, indices_or_sections: Any, axis: int = 0) -> list[Any]:
    """``ary`` cut along ``axis`` into sections (an int: near-equal sizes, the first ones
    larger) or at the given static indices; a list of arrays."""
    if _eager(ary):
        return np.array_split(ary, indices_or_sections, axis=axis)
    ax = _axes(axis, ary.ndim)[0]
    n = ary.shape[ax]
    if isinstance(indices_or_sections, (int, np.integer)):
        k = int(indices_or_sections)
        if k <= 0:
            raise _err("split", "the number of sections must be positive")
        sizes = [n // k + 1] * (n % k) + [n // k] * (k - n % k)
        cuts = list(np.cumsum(sizes)[:-1])
    else:
        cuts = [int(c) for c in indices_or_sections]
    bounds = [0] + cuts + [n]
    out = []
    for lo, hi in zip(bounds[:-1], bounds[1:], strict=True):
        idx = [slice(None)] * ary.ndim
        idx[ax] = slice(lo, builtins.max(lo, hi))
        out.append(ary[tuple(idx)])
    return out


def split(ary: Any, indices_or_sections: Any, axis: int = 0) -> list[Any]:
    """``array_split`` that requires equal sections when given a count (numpy's)."""
    if _eager(ary):
        return np.split(ary, indices_or_sections, axis=axis)
    if isinstance(indices_or_sections, (int, np.integer)) and \
            ary.shape[_axes(axis, ary.ndim)[0]] % int(indices_or_sections):
        raise _err("split", "array split does not result in an equal division; use "
                   "np.array_split")
    return array_split(ary, indices_or_sections, axis)


def select(condlist: Any, choicelist: Any, default: Any = 0) -> Any:
    """Per element, the choice of the first true condition (``default`` where none is)."""
    if _eager(*condlist, *choicelist):
        return np.select(condlist, choicelist, default)
    if len(condlist) != len(choicelist):
        raise _err("select", "condlist and choicelist need the same length")
    out = default
    for c, v in zip(reversed(list(condlist)), reversed(list(choicelist)), strict=True):
        out = where(c, v, out)
    return out


def broadcast_arrays(*args: Any) -> list[Any]:
    """The arrays broadcast to their common shape."""
    if _eager(*args):
        return list(np.broadcast_arrays(*args))
    shape = np.broadcast_shapes(*(tuple(shape_of(a)) for a in args))
    return [broadcast_to(a, shape) for a in args]


def identity(n: int, dtype: Any = None) -> np.ndarray:
    """The ``n × n`` identity (host data: a constant inside a trace; f64 by default)."""
    return np.identity(n, dtype=dtype)


# ---------------------------------------------------------------- searching
def searchsorted(a: Any, v: Any, side: str = "left", sorter: Any = None) -> Any:
    """Insertion positions (i32) of ``v`` in the sorted 1-D ``a`` (``side`` left | right).

    Raises:
        UnsupportedError: ``sorter`` (sort ``a`` first).
    """
    if _eager(a, v):
        return np.searchsorted(a, v, side=side, sorter=sorter)
    if sorter is not None:
        raise UnsupportedError(f"searchsorted at {user_location()} with sorter=: pass "
                               "a[sorter] (already sorted) instead", feature="sorter",
                               alternative="a[sorter]")
    if len(shape_of(a)) != 1:
        raise _err("searchsorted", "a must be 1-D")
    vv = v if isinstance(v, Tracer) else np.asarray(v)
    ve = reshape(vv, tuple(shape_of(vv)) + (1,))
    hit = less(a, ve) if side == "left" else less_equal(a, ve)
    if common(a, ve).is_float:  # numpy's order puts NaN last: above every number
        v_nan = not_equal(ve, ve)
        hit = logical_or(hit, v_nan if side == "right" else
                         logical_and(v_nan, logical_not(not_equal(a, a))))
    return astype(sum(astype(hit, np.int32), axis=-1), np.int32)


def digitize(x: Any, bins: Any, right: bool = False) -> Any:
    """Index (i32) of the bin of each ``x`` for increasing ``bins`` (numpy's convention)."""
    if _eager(x, bins):
        return np.digitize(x, bins, right=right)
    return searchsorted(bins, x, side="left" if right else "right")


def interp(x: Any, xp: Any, fp: Any, left: Any = None, right: Any = None) -> Any:
    """Piecewise-linear interpolation of the points ``(xp, fp)`` (``xp`` increasing) at
    ``x``; ``left``/``right`` (default ``fp[0]``/``fp[-1]``) outside."""
    if _eager(x, xp, fp):
        return np.interp(x, xp, fp, left=left, right=right)
    n = shape_of(xp)[0]
    i = searchsorted(xp, x, side="right")
    lo = where(less(i, 1), 1, where(greater_equal(i, n), n - 1, i))
    lo = astype(subtract(lo, 1), np.int32)
    x0, x1 = take(xp, lo), take(xp, add(lo, 1))
    y0, y1 = take(fp, lo), take(fp, add(lo, 1))
    span = subtract(x1, x0)
    t = divide(subtract(x, x0), where(equal(span, 0), 1.0, span))
    y = add(y0, multiply(t, subtract(y1, y0)))
    y = where(equal(x, x1), y1, y)
    first = fp[0] if left is None else left
    last = fp[n - 1] if right is None else right
    return where(less(x, xp[0]), first, where(less(xp[n - 1], x), last, y))


def isin(element: Any, test_elements: Any, invert: bool = False) -> Any:
    """Per element of ``element``: whether it is among ``test_elements``."""
    if _eager(element, test_elements):
        return np.isin(element, test_elements, invert=invert)
    t = reshape(test_elements, (-1,)) if isinstance(test_elements, Tracer) else \
        np.asarray(test_elements).reshape(-1)
    e = reshape(element, tuple(shape_of(element)) + (1,))
    hit = any_(equal(e, t), axis=-1)
    return ~hit if invert else hit
