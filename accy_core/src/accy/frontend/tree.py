"""Flatten nested arguments and results (tuples, lists, dicts) into array leaves.

A *tree* is a hashable description of the structure: array leaves are marked ``("*",)``
and every other leaf is kept by value (it is static: part of the trace signature). A
complex array (host complex64/complex128, or a traced
:class:`~accy.frontend.complex_api.ComplexTracer`) is two float leaves, its real and
imaginary parts, marked ``("c*",)``: rebuilt as a ComplexTracer from traced leaves and as a
complex numpy array from host ones.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from accy.errors import InputError

__all__ = ["flatten", "is_array", "unflatten"]


def is_array(x: Any) -> bool:
    """Arrays are traced; numbers, strings, None and other hashables are static."""
    if isinstance(x, (bool, int, float, complex, str, bytes, type(None), type, np.dtype)):
        return False  # a type (np.float32 has an __array__ method) or a dtype: static
    from accy.frontend.tracer import Tracer

    return isinstance(x, Tracer) or hasattr(x, "__array__") or hasattr(x, "__dlpack__")


def flatten(x: Any, leaves: list[Any], what: str = "argument") -> Any:
    """Append the array leaves of ``x`` to ``leaves``; return its hashable tree.

    Raises:
        InputError: a leaf is neither an array nor hashable.
    """
    if isinstance(x, (tuple, list)):
        kids = tuple(flatten(i, leaves, what) for i in x)
        if type(x) in (tuple, list):
            return (type(x).__name__, kids)
        if isinstance(x, tuple) and hasattr(x, "_fields"):  # a namedtuple comes back as one
            return ("namedtuple", type(x), kids)
        return ("tuple" if isinstance(x, tuple) else "list", kids)
    if isinstance(x, dict):
        try:
            keys = sorted(x)
        except TypeError:  # keys of several types ({'a': .., 1: ..}): a stable order anyway
            keys = sorted(x, key=lambda k: (type(k).__name__, repr(k)))
        return ("dict", tuple((k, flatten(x[k], leaves, what)) for k in keys))
    pair = _complex_parts(x)
    if pair is not None:
        leaves.extend(pair)
        return ("c*",)
    if is_array(x):
        leaves.append(x)
        return ("*",)
    try:
        hash(x)
    except TypeError:
        raise InputError(
            f"{what} {x!r} of type {type(x).__name__} is neither an array nor a hashable "
            "static value; pass arrays, numbers, strings or tuples/lists/dicts of them"
        ) from None
    return ("=", type(x).__name__, x)


def _complex_parts(x: Any) -> tuple[Any, Any] | None:
    from accy.frontend.complex_api import ComplexTracer

    if isinstance(x, ComplexTracer):
        return x.re, x.im
    if isinstance(x, np.ndarray) and x.dtype.kind == "c":
        if x.dtype not in (np.complex64, np.complex128):
            raise InputError(f"{x.dtype} arrays are not supported (only complex64 and "
                             "complex128): pass x.astype(np.complex128)")
        f = np.float32 if x.dtype == np.complex64 else np.float64
        return np.ascontiguousarray(x.real, f), np.ascontiguousarray(x.imag, f)
    return None


def unflatten(tree: Any, leaves: list[Any]) -> Any:
    """Inverse of :func:`flatten`: rebuild the structure, consuming ``leaves`` in order."""
    it = iter(leaves)
    return _build(tree, it)


def _build(tree: Any, it: Any) -> Any:
    kind = tree[0]
    if kind == "*":
        return next(it)
    if kind == "c*":
        re, im = next(it), next(it)
        from accy.frontend.tracer import Tracer

        if isinstance(re, Tracer):
            from accy.frontend.complex_api import ComplexTracer

            return ComplexTracer(re, im)
        re, im = np.asarray(re), np.asarray(im)
        out = np.empty(re.shape, np.complex64 if re.dtype == np.float32 else np.complex128)
        out.real, out.imag = re, im
        return out
    if kind == "=":
        return tree[2]
    if kind == "dict":
        return {k: _build(t, it) for k, t in tree[1]}
    if kind == "namedtuple":
        return tree[1](*(_build(t, it) for t in tree[2]))
    items = [_build(t, it) for t in tree[1]]
    return tuple(items) if kind == "tuple" else items
