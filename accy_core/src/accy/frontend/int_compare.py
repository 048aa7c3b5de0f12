"""Comparisons of an integer array with a Python int outside its dtype's range.

numpy 2 (NEP 50) answers them rather than refusing the constant: ``x_u8 < 256`` is True
everywhere, ``x_u32 == -1`` False everywhere. accy's arithmetic refuses a constant that
does not fit (``x_u8 + 256`` is a ``VerifyError``, as numpy's ``OverflowError``), so the
comparison is decided here from the constant alone: a bool array of the broadcast shape.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from accy.frontend.trace import Trace, constant
from accy.frontend.tracer import Tracer
from accy.ir import DType

__all__ = ["out_of_range_compare"]

#: ``x <op> c`` with ``c`` above the dtype's maximum (below the minimum: the negation)
_ABOVE = {"equal": False, "not_equal": True, "less": True, "less_equal": True,
          "greater": False, "greater_equal": False}
_MIRROR = {"less": "greater", "less_equal": "greater_equal", "greater": "less",
           "greater_equal": "less_equal", "equal": "equal", "not_equal": "not_equal"}


def out_of_range_compare(tr: Trace, name: str, a: Any, b: Any, dt: DType,
                         shape: tuple[int, ...]) -> Tracer | None:
    """``a <name> b`` (``name`` a numpy comparison, ``dt`` the integer operand dtype) when
    one operand is a Python int outside ``dt``'s range, as a constant bool array of
    ``shape``; None otherwise (the ordinary comparison applies)."""
    info = np.iinfo(dt.numpy)
    for const, op in ((b, name), (a, _MIRROR[name])):  # as ``array <op> const``
        if type(const) is int and not info.min <= const <= info.max:
            above = const > info.max
            truth = _ABOVE[op] if above or op in ("equal", "not_equal") else not _ABOVE[op]
            value = constant(tr.fb, np.asarray(bool(truth)), DType.BOOL)
            return Tracer(tr.fb.broadcast_to(value, shape), tr)
    return None
