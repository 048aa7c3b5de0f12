"""numpy ufuncs called with ``out=`` on traced operands, and ``ufunc.at``.

- ``np.add(a, b, out=t)`` with a traced ``t`` writes the result into ``t``
  (``t[...] = result``, so views and written arguments follow) and returns ``t``.
- ``h += t`` where ``h`` is a host numpy array made inside the jitted function
  (``count = np.zeros(n, np.int32); count += mask``): numpy calls the ufunc with
  ``out=(h,)`` and Python binds ``h`` to what it returns, so the traced result (cast to
  ``h``'s dtype, broadcast to its shape) replaces ``h``. This is only equal to numpy when
  nothing else refers to ``h`` (no view of it, no second name); the reference count of
  ``h`` is compared with the count the same call sees on an unshared array (measured once
  at import), and a shared ``h`` is refused.
- ``np.clip(x, 0, 1, out=t)`` and other ``accy.numpy`` functions without an ``out``
  parameter of their own: the result is stored into a traced ``t`` the same way.
- ``np.add.at(t, idx, v)`` (and ``multiply``/``minimum``/``maximum``) on a traced ``t``
  rebinds ``t`` to ``t.at[idx].add(v)`` (repeated indices accumulate, as numpy's).

Any other host ``out`` raises :class:`~accy.errors.UnsupportedError` naming the line.
"""

from __future__ import annotations

import sys
from typing import Any

import numpy as np

from accy.errors import UnsupportedError
from accy.frontend import numpy_api, shape_api
from accy.frontend.trace import user_location
from accy.frontend.tracer import Tracer

__all__ = ["UNSHARED_REFS", "call_with_out", "store_out", "ufunc_at"]

_AT = {"add": "add", "multiply": "multiply", "minimum": "min", "maximum": "max"}


class _Probe:
    """Records the reference count an ``out=`` array has inside ``__array_ufunc__``."""

    seen: list[int] = []

    def __array_ufunc__(self, ufunc: Any, method: str, *inputs: Any, **kwargs: Any) -> Any:
        _Probe.seen.append(sys.getrefcount(kwargs["out"][0]))  # same expression as methods
        return self


def _measure() -> int:
    h = np.zeros(1)
    h += _Probe()  # noqa: F841 - the count seen with one name bound to h
    return _Probe.seen[-1]


#: the reference count of an unshared host ``out`` array as ``__array_ufunc__`` sees it
UNSHARED_REFS = _measure()


def _refuse(what: str, fix: str) -> UnsupportedError:
    return UnsupportedError(f"{what} at {user_location()} is not supported; {fix}",
                            feature=f"ufunc {what}", alternative=fix)


_HOST_FIX = ("make the output array traced (np.zeros_like(t), or anp.zeros(shape, dtype) "
             "with accy.numpy as anp) or write x = np.add(a, b) instead of out=")


def call_with_out(fn: Any, name: str, inputs: tuple, out: Any, refs: int) -> Any:
    """``fn(*inputs)`` stored into ``out`` (a tuple of one array); ``refs`` is the reference
    count of ``out[0]`` seen on entry to ``__array_ufunc__``.

    Raises:
        UnsupportedError: several outputs, a host ``out`` that is not the first operand of
            an in-place operator or is shared, or a cast numpy refuses (float into int).
    """
    if not isinstance(out, tuple) or len(out) != 1:
        raise _refuse(f"np.{name}(..., out=...) with several outputs", _HOST_FIX)
    o = out[0]
    res = fn(*inputs)
    if isinstance(o, Tracer):
        o[...] = res
        return o
    if not isinstance(o, np.ndarray) or not inputs or inputs[0] is not o:
        raise _refuse(f"np.{name}(..., out=host_array) with traced operands", _HOST_FIX)
    if refs > UNSHARED_REFS or o.base is not None:
        raise _refuse(f"an in-place '{name}' into a host numpy array that is shared (a view, "
                      "or a second name refers to it)", _HOST_FIX)
    if np.dtype(res.dtype).kind == "f" and o.dtype.kind in "iub":
        raise _refuse(f"an in-place '{name}' storing {res.dtype} into a {o.dtype} array "
                      "(numpy refuses this cast too)", "write x = x op y to make a new array")
    if tuple(res.shape) != o.shape:
        res = shape_api.broadcast_to(res, o.shape)
    return numpy_api.astype(res, o.dtype) if np.dtype(res.dtype) != o.dtype else res


def store_out(what: str, res: Any, out: Any) -> Any:
    """``res`` written into ``out`` (a traced array, or a tuple of one), as numpy's
    ``out=`` of a function (``np.clip(x, 0, 1, out=x)``); returns ``out``.

    Raises:
        UnsupportedError: a host ``out`` (it cannot hold traced values) or several.
    """
    if isinstance(out, tuple) and len(out) == 1:
        out = out[0]
    if not isinstance(out, Tracer):
        raise _refuse(f"{what}(..., out=) into a {type(out).__name__}", _HOST_FIX)
    out[...] = res
    return out


def ufunc_at(name: str, a: Any, indices: Any, b: Any = None) -> None:
    """``np.<name>.at(a, indices, b)``: ``a`` (traced) rebound to ``a.at[indices].<op>(b)``.

    Raises:
        UnsupportedError: a ufunc other than add/multiply/minimum/maximum, or a host ``a``.
    """
    op = _AT.get(name)
    if op is None or b is None:
        raise _refuse(f"np.{name}.at", "np.add.at, np.multiply.at, np.minimum.at or "
                      "np.maximum.at with a value, or x.at[idx].set(v)")
    if not isinstance(a, Tracer):
        raise _refuse(f"np.{name}.at into a host numpy array with traced values", _HOST_FIX)
    a[...] = getattr(a.at[indices], op)(b)
