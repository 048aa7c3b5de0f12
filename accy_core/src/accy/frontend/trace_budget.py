"""The size budget of one ``accy.jit`` trace: Python loops run while a function is traced,
so every iteration appends its ops, and a loop nest over the data (a numpy-style Cholesky
at n = 400 unrolls 80,000 dot products) makes a trace of millions of ops whose passes and
code generation take minutes to hours and gigabytes, with nothing said.

:class:`TraceBudget` is the trace builder's ``watch`` (:class:`accy.ir.FunctionBuilder`):
past :data:`WARN_OPS` ops it warns once (an :class:`~accy.errors.AccyWarning` naming the
user's line that is being traced and the alternatives), and past ``ACCY_TRACE_OP_LIMIT``
(:func:`accy.config.trace_op_limit`, default 100,000) it raises an
:class:`~accy.errors.UnsupportedError`, before memory runs out.
"""

from __future__ import annotations

import os
import sys
import warnings

from accy.errors import AccyWarning, UnsupportedError
from accy.ir.location import user_location

__all__ = ["WARN_OPS", "TraceBudget"]

#: ops of one trace past which the user is told that the trace is large (about 10 s of
#: compilation when the ops form distinct kernels: ~25 ms of LLVM each)
WARN_OPS = 20_000

_ADVICE = ("Python loops run while the function is traced, so each iteration adds its "
           "operations (and kernels) to the program; write a loop over steps with "
           "accy.fori_loop (traced once, run as a native loop), and loops over elements as "
           "whole-array operations (slices, anp.where, matrix products)")

_ACCY_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


def _user_stacklevel() -> int:
    """The ``warnings.warn`` stacklevel of the innermost frame outside the accy package."""
    level, frame = 1, sys._getframe(1)
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(_ACCY_DIR):
        frame, level = frame.f_back, level + 1
    return level


class TraceBudget:
    """Watch one trace's op count (see the module docstring).

    Args:
        name: the traced function's name (for messages).
        limit: ops past which the trace is refused (None: no limit).
    """

    def __init__(self, name: str, limit: int | None) -> None:
        self.name = name
        self.limit = limit
        self.warned = False

    def __call__(self, ops: int) -> None:
        """Warn at :data:`WARN_OPS` ops, raise past the limit.

        Raises:
            UnsupportedError: ``ops`` reached the limit (names the line being traced).
        """
        if self.limit is not None and ops >= self.limit:
            raise UnsupportedError(
                f"accy.jit {self.name}: the trace reached {ops:,} operations at "
                f"{user_location()} (ACCY_TRACE_OP_LIMIT={self.limit:,}); {_ADVICE}. "
                "Raise ACCY_TRACE_OP_LIMIT (0 = no limit) to trace it anyway",
                feature="trace size", alternative="accy.fori_loop")
        if ops >= WARN_OPS and not self.warned:
            self.warned = True
            warnings.warn(
                f"accy.jit {self.name}: the trace has {ops:,} operations so far (now at "
                f"{user_location()}): compilation grows with it; {_ADVICE}",
                AccyWarning, stacklevel=_user_stacklevel())
