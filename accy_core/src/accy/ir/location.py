"""Where the user is: the ``file:line`` of the innermost caller outside the accy package
(and outside numpy, whose helpers such as ``np.r_`` convert a traced array on the user's
behalf).

Errors raised while building IR (the builder, the frontend's tracer) name the user's source
line with it.
"""

from __future__ import annotations

import os
import sys

import numpy as np

__all__ = ["user_location"]

_ACCY_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_NUMPY_DIR = os.path.dirname(os.path.abspath(np.__file__))

_INSIDE_ACCY: dict[str, bool] = {}  # code file name → is it part of the accy package


def user_location() -> str | None:
    """``file:line`` of the innermost caller outside the accy and numpy packages, or None."""
    f = sys._getframe(1)
    while f is not None:
        fn = f.f_code.co_filename
        inside = _INSIDE_ACCY.get(fn)
        if inside is None:
            path = os.path.abspath(fn)
            inside = _INSIDE_ACCY[fn] = path.startswith((_ACCY_DIR + os.sep,
                                                         _NUMPY_DIR + os.sep))
        if not inside:
            return f"{os.path.basename(fn)}:{f.f_lineno}"
        f = f.f_back
    return None
