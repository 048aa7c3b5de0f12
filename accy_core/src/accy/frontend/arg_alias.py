"""Written array arguments: their copy back into the caller's arrays, and arguments that
share memory with one the jitted function writes into.

A traced function reads every argument as a value of its own, and the values it writes are
copied back after the run (``accy.frontend.jit``). numpy (and numba) instead write through
memory, so ``f(a, a)`` whose ``x += 1; y += 1`` adds 2 to ``a`` would add 1 under accy if
the two arguments were traced as two values. :func:`argument_aliases` finds such calls:

- the same view passed twice (same address, dtype, shape and strides) is traced as one
  array, so a write through one name is seen through the other, as in numpy;
- any other overlap (``f(a[1:], a[:-1])``) is refused with an :class:`InputError`: which
  elements a write reaches through the other view is not expressible in the trace.

Arguments that are only read may share memory freely; only calls of functions that write
into an argument are checked (their small-call fast path refuses any call whose arguments
overlap: :mod:`accy.frontend.written_fast`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from accy.errors import InputError, UnsupportedError
from accy.frontend.device_array import DeviceArray

__all__ = ["argument_aliases", "write_back"]


def _same_view(x: np.ndarray, y: np.ndarray) -> bool:
    return (x.__array_interface__["data"][0] == y.__array_interface__["data"][0]
            and x.dtype == y.dtype and x.shape == y.shape and x.strides == y.strides)


def _overlap(x: np.ndarray, y: np.ndarray) -> bool:
    if not np.may_share_memory(x, y):  # bounds only: cheap, no false negatives
        return False
    try:
        return bool(np.shares_memory(x, y, max_work=1 << 16))
    except np.exceptions.TooHardError:
        return True  # cannot tell cheaply: treat as overlapping


def argument_aliases(name: str, leaves: list[Any], writes: tuple[int, ...]) -> tuple:
    """``((j, i), ...)``: argument leaf ``j`` is the same numpy view as the earlier leaf
    ``i`` and one of them is written; empty when no written argument shares memory.

    Raises:
        InputError: a written array argument overlaps another array argument in any other
            way (a shifted or strided view of the same data).
    """
    if not writes:
        return ()
    arrays = [(k, x) for k, x in enumerate(leaves) if type(x) is np.ndarray]
    if len(arrays) < 2:
        return ()
    written = set(writes)
    alias: dict[int, int] = {}
    for a, (i, x) in enumerate(arrays):
        for j, y in arrays[a + 1:]:
            if j in alias or (i not in written and j not in written) or not _overlap(x, y):
                continue
            if _same_view(x, y):
                alias[j] = alias.get(i, i)
                continue
            w = i if i in written else j
            raise InputError(
                f"{name}: array arguments #{i} and #{j} share memory and the function writes "
                f"into #{w}; accy reads each argument as a value of its own, so the write "
                "would not reach the other view as it does in numpy; pass a copy "
                f"(f(..., a.copy(), ...)) or pass the base array once and slice it inside")
    return tuple(sorted(alias.items()))


def write_back(name: str, writes: tuple[int, ...], leaves: list[Any], results: list[Any]
               ) -> list[Any]:
    """Copy the final values of written arguments into the caller's arrays (like numba);
    returns the function's own results."""
    n = len(results) - len(writes)
    for i, new in zip(writes, results[n:], strict=True):
        arg = leaves[i]
        if isinstance(arg, DeviceArray):
            raise UnsupportedError(
                f"{name}: the function writes into array argument #{i}, a device array; "
                "device arrays are not written back: return the updated array instead",
                feature="write into a device array argument", alternative="return it")
        if not isinstance(arg, np.ndarray):
            continue  # a temporary (list, scalar): numpy would have written into a copy
        try:
            np.copyto(arg, np.asarray(new), casting="unsafe")
        except ValueError as err:
            raise InputError(f"{name}: the function writes into array argument #{i}, which "
                             f"cannot be written ({err}); pass a writable copy") from None
    return results[:n]
