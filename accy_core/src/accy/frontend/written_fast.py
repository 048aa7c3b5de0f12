"""The small-call path of a jitted function that writes into its array arguments.

Such a function returns each written argument's final value as an extra, hidden result
after its own (``accy.frontend.jit``), and the call copies them into the caller's numpy
arrays (``np.copyto``), as numba does; on the ordinary path
:func:`accy.frontend.arg_alias.write_back` does it and raises the documented errors.
:func:`fast_written` wraps an executable's small-call function
(:mod:`accy.runtime.fast_call`) for such a function, so a warm call of a few hundred
elements costs the fast call and one copy per written argument.

The fast version refuses (returns ``None``: the caller takes the ordinary path, which
raises or handles it) every call whose copy could differ from the ordinary path's: a
written argument that is read-only (the ordinary path raises :class:`InputError`) or whose
memory overlaps another argument's (the same array passed twice is traced as one array,
another overlap is an :class:`InputError`: :mod:`accy.frontend.arg_alias`). The small-call
function itself refuses anything but exact, C-contiguous numpy arrays of the signature's
dtypes and shapes, so the overlap test is exact: each argument is one interval of bytes.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from accy.runtime.fast_call import array_address, no_fast_call

__all__ = ["fast_written"]

_copyto = np.copyto


def _overlaps(args: Sequence[np.ndarray], writes: tuple[int, ...]) -> bool:
    """Whether a written argument's bytes overlap another argument's (``args``: exact
    C-contiguous ndarrays, each one interval)."""
    spans = [(array_address(a), a.nbytes) for a in args]
    for i in writes:
        p, n = spans[i]
        for j, (q, m) in enumerate(spans):
            if j != i and p < q + m and q < p + n:
                return True
    return False


def fast_written(fast: Callable[[Sequence[Any]], tuple | None], writes: tuple[int, ...]
                 ) -> Callable[[Sequence[Any]], tuple | None]:
    """``call(args)``: the small-call function ``fast`` of a function that writes into
    argument leaves ``writes`` (all of them positional arrays), then the copy of its hidden
    results into those arguments; returns the function's own results, or ``None`` for a
    call the ordinary path must take (module docstring). Nothing is copied into a refused
    call's arguments."""
    if fast is no_fast_call:
        return no_fast_call
    n_writes = len(writes)

    def call(args: Sequence[Any]) -> tuple | None:
        out = fast(args)  # None unless args are the signature's exact C-contiguous arrays
        if out is None:
            return None
        for i in writes:
            if not args[i].flags.writeable:
                return None
        if len(args) > 1 and _overlaps(args, writes):
            return None
        n = len(out) - n_writes
        for i, new in zip(writes, out[n:], strict=True):
            _copyto(args[i], new, casting="unsafe")
        return out[:n]

    return call
