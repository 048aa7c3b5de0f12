"""Errors of the Python frontend.

:class:`TracerConversionError` is raised when a traced function asks for the *value* of a
traced array at trace time: a Python ``if``/``while`` on it, ``bool()``, ``int()``,
``float()``, ``len()`` of data, or ``np.asarray(tracer)``. It plays the role of JAX's
``ConcretizationTypeError`` and derives from :class:`accy.errors.UnsupportedError` (and so
from ``TypeError``, which Python raises for the same misuse of unhashable/abstract values).
"""

from __future__ import annotations

from accy.errors import UnsupportedError

__all__ = ["TracerConversionError", "control_flow_message"]

_FIX = (
    "a traced array has no value while the function is traced: Python control flow runs "
    "once, at trace time, and cannot depend on array data; use anp.where(cond, a, b) to "
    "select per element, accy.lax.while_loop(cond, body, init) for a loop that stops on "
    "a condition of the data (while err > tol, if ...: break), compute the condition "
    "outside the jitted function and pass it as a static Python value, or mark the "
    "argument static with accy.jit(static_argnums=...)"
)
_ARRAY_FIX = (
    "a traced array has no value while the function is traced. If this is a write into a "
    "numpy array made inside the function (out = np.zeros(...); out[i] = t, or "
    "np.add(a, b, out=out)), make that array traced instead: np.zeros_like(t) or "
    "anp.zeros(shape, dtype) (accy.numpy as anp); otherwise return t from the jitted "
    "function and convert the result outside"
)


def control_flow_message(what: str, array: str, where: str | None) -> str:
    """The message for converting traced ``array`` with ``what`` (``"bool()"``) at ``where``;
    a conversion to a numpy array gets the fix for writes into host arrays."""
    at = f" at {where}" if where else ""
    fix = _ARRAY_FIX if what.startswith("conversion to a numpy array") else _FIX
    return f"{what} on traced array {array}{at} needs its value; {fix}"


class TracerConversionError(UnsupportedError):
    """A traced array was used where Python needs a concrete value (``if x > 0:``).

    Attributes:
        feature: what was attempted (``"bool()"``, ``"int()"``, ...).
        alternative: ``"anp.where"``.
    """

    def __init__(self, message: str, feature: str = "", backend: str = "",
                 alternative: str = "anp.where") -> None:
        super().__init__(message, feature=feature, backend=backend, alternative=alternative)


class UnsupportedFunctionError(UnsupportedError, AttributeError):
    """``accy.numpy.<name>`` where numpy has ``name`` but accy does not support it.

    Also an ``AttributeError``, so ``hasattr(anp, "fft")`` is False and ``getattr`` with a
    default works.

    Attributes:
        feature: ``"numpy.<name>"``.
        alternative: comma-separated supported functions that come closest.
    """
