"""Errors of the Python frontend.

:class:`TracerConversionError` is raised when a traced function asks for the *value* of a
traced array at trace time: a Python ``if``/``while`` on it, ``bool()``, ``int()``,
``float()``, ``len()`` of data, or ``np.asarray(tracer)``. It plays the role of JAX's
``ConcretizationTypeError`` and derives from :class:`accy.errors.UnsupportedError` (and so
from ``TypeError``, which Python raises for the same misuse of unhashable/abstract values).
"""

from __future__ import annotations

from accy.errors import UnsupportedError

__all__ = ["TracerConversionError", "control_flow_message", "conversion_cause",
           "host_store_message"]

_FIX = (
    "a traced array has no value while the function is traced: Python control flow runs "
    "once, at trace time, and cannot depend on array data; use anp.where(cond, a, b) to "
    "select per element, accy.lax.while_loop(cond, body, init) for a loop that stops on "
    "a condition of the data (while err > tol, if ...: break), compute the condition "
    "outside the jitted function and pass it as a static Python value, or mark the "
    "argument static with accy.jit(static_argnums=...)"
)
_HOST_WRITE_FIX = (
    "make that array traced instead: np.zeros_like(t) or anp.zeros(shape, dtype) "
    "(accy.numpy as anp)"
)
_ARRAY_FIX = (
    "a traced array has no value while the function is traced. If this is a write into a "
    "numpy array made inside the function (out = np.zeros(...); out[i] = t, or "
    f"np.add(a, b, out=out)), {_HOST_WRITE_FIX}; np.array([t, u]) of traced values: "
    "anp.stack([t, u]) or anp.array([t, u]); np.r_[t, u] / np.c_[t, u]: "
    "anp.concatenate([t, u]) / anp.column_stack([t, u]); a numpy array indexed by a "
    "traced one "
    "(np.eye(k)[t]): anp.asarray(np.eye(k))[t]; np.float32(t) / np.int32(t): "
    "t.astype(np.float32); np.asarray(t) / np.array(t): t itself, t.astype(dtype) or "
    "t.copy(); otherwise return t from the jitted function and convert the result outside"
)
_BUILTIN_HINT = (
    "; Python's built-in max(a, b), min(a, b) and sorted() compare with bool() too: use "
    "np.maximum(a, b), np.minimum(a, b) or np.sort"
)


_MATH_HINT = ("; math.sqrt(t), math.exp(t) and the other math functions need a Python "
              "number too: use np.sqrt(t), np.exp(t)")


def control_flow_message(what: str, array: str, where: str | None) -> str:
    """The message for converting traced ``array`` with ``what`` (``"bool()"``) at ``where``;
    a conversion to a numpy array gets the fix for writes into host arrays."""
    at = f" at {where}" if where else ""
    if what.startswith("conversion to a numpy array"):
        fix = _ARRAY_FIX
    else:
        fix = _FIX + (_BUILTIN_HINT if what.startswith("bool()") else
                      _MATH_HINT if what.startswith("float()") else "")
    return f"{what} on traced array {array}{at} needs its value; {fix}"


def host_store_message(cause: TracerConversionError, err: BaseException) -> str:
    """The message for numpy's own error (``err``, a ``ValueError`` or ``TypeError``) raised
    while it converted a traced array (``cause``): almost always ``h[i] = t`` into a numpy
    array ``h`` made inside the jitted function, which numpy converts with ``float()``."""
    at = f" at {cause.where}" if cause.where else ""
    return (f"numpy raised {type(err).__name__}({str(err)!r}){at} while converting traced "
            f"array {cause.array} with {cause.feature}: a traced value cannot be stored "
            "into a numpy array made inside the jitted function (h = np.zeros((n, n)); "
            f"h[i, j] = t); {_HOST_WRITE_FIX}, e.g. h = anp.zeros((n, n), t.dtype)")


class TracerConversionError(UnsupportedError):
    """A traced array was used where Python needs a concrete value (``if x > 0:``).

    Attributes:
        feature: what was attempted (``"bool()"``, ``"int()"``, ...).
        alternative: ``"anp.where"``.
    """

    def __init__(self, message: str, feature: str = "", backend: str = "",
                 alternative: str = "anp.where", array: str = "", where: str = "") -> None:
        super().__init__(message, feature=feature, backend=backend, alternative=alternative)
        self.array, self.where = array, where


class UnsupportedFunctionError(UnsupportedError, AttributeError):
    """``accy.numpy.<name>`` where numpy has ``name`` but accy does not support it.

    Also an ``AttributeError``, so ``hasattr(anp, "fft")`` is False and ``getattr`` with a
    default works.

    Attributes:
        feature: ``"numpy.<name>"``.
        alternative: comma-separated supported functions that come closest.
    """


def conversion_cause(err: BaseException) -> TracerConversionError | None:
    """The :class:`TracerConversionError` behind ``err`` (its ``__cause__`` or
    ``__context__`` chain), if any."""
    seen = 0
    e: BaseException | None = err
    while e is not None and seen < 8:
        if isinstance(e, TracerConversionError):
            return e
        e = e.__cause__ or e.__context__
        seen += 1
    return None
