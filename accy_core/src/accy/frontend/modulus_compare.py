"""``abs(z) < c`` for a complex ``z`` and a real scalar radius ``c``, decided on the squared
modulus (see :func:`modulus_compare`): the escape test of mandelbrot-style loops."""

from __future__ import annotations

from typing import Any

import numpy as np

from accy.frontend.trace import current_trace
from accy.frontend.tracer import Tracer

__all__ = ["SWAP", "modulus_compare", "record_modulus"]

#: ``(lo, hi)`` radii for which ``|z| < c`` may be decided on ``re*re + im*im`` in this
#: float type: ``c*c`` and every sum of squares near it are normal numbers, and a part
#: whose square overflows has ``|z| > hi``
_RADIUS_RANGE = {"f32": (2.0 ** -60, 2.0 ** 60), "f64": (2.0 ** -500, 2.0 ** 500)}
SWAP = {"less": "greater", "less_equal": "greater_equal", "greater": "less",
        "greater_equal": "less_equal"}


def record_modulus(t: Tracer, re: Tracer, im: Tracer) -> None:
    """Note that ``t`` is ``|re + i*im|`` (``complex_api.absolute``), so that comparing it
    with a radius can use the squared modulus (:func:`modulus_compare`)."""
    if t.trace is re.trace is im.trace:
        t.trace.__dict__.setdefault("moduli", {})[t._value] = (re, im)


def modulus_compare(name: str, a: Any, b: Any) -> Any:
    """``abs(z) < c`` (``<=``, ``>``, ``>=``, either side) for a complex ``z`` and a Python
    or numpy real scalar radius ``c`` as ``re*re + im*im < c*c``: no hypot (a sqrt, a
    division and four selects per element), and ``z``'s parts are the only arrays read, so an
    escape-time loop (mandelbrot, julia) fuses its test into the update of ``z``. NaN and
    infinite parts give numpy's answer (``>``/``>=`` also hold for an infinite part with a
    NaN one); a point whose modulus is within one or two ulp of ``c`` may be classified
    differently from numpy's correctly rounded hypot. None where the pattern does not apply
    (``c`` not a finite scalar in :data:`_RADIUS_RANGE`, ``abs(z)`` written since)."""
    if not isinstance(a, Tracer) and isinstance(b, Tracer):
        a, b, name = b, a, SWAP[name]
    if not isinstance(a, Tracer) or isinstance(b, Tracer | complex) or np.ndim(b) != 0:
        return None
    parts = getattr(a.trace, "moduli", {}).get(a._value)
    if parts is None or a._view is not None:
        return None
    if current_trace() not in (None, a.trace):
        return None
    try:
        c = float(b)
    except (TypeError, ValueError):
        return None
    lo, hi = _RADIUS_RANGE.get(a._value.type.dtype.value, (1.0, 0.0))
    if not lo <= c <= hi:
        return None
    re, im = parts  # the tracer's operators: numpy_api's functions, without importing it
    s = re * re + im * im
    if name == "less":
        return s < c * c
    if name == "less_equal":
        return s <= c * c
    inf = (abs(re) == np.inf) | (abs(im) == np.inf)
    return ((s > c * c) if name == "greater" else (s >= c * c)) | inf
