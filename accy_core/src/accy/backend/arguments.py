"""A launch's arguments checked against the kernel's parameters and converted, for the
backends that bind a kernel's arguments one by one (CUDA, OpenCL).

The checks are the launch contract of :class:`accy.backend.Backend`: as many buffers and
scalars as the kernel has parameters, each buffer a whole number of its elements, a buffer
the kernel writes not bound to a second parameter (unless compiled with ``noalias=False``),
each scalar of its parameter's dtype.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping, Sequence
from typing import Any

from accy.errors import LaunchError
from accy.kernel.dtypes import dtype_bytes

__all__ = ["launch_arguments"]


def launch_arguments(name: str, meta: Mapping[str, Any], buffers: Sequence[Any],
                     scalars: Sequence[tuple[str, int | float]], *,
                     buffer_arg: Callable[[Any], Any],
                     scalar_arg: Callable[[str, int | float], Any],
                     alias_key: Callable[[Any], Hashable]) -> list[Any]:
    """The kernel arguments of a launch of kernel ``name``, buffers then scalars.

    ``meta["buffers"]`` lists the kernel's buffer parameters as ``(name, dtype, access)``,
    ``meta["scalars"]`` its scalars as ``(name, dtype)``; ``meta["noalias"]`` (default True)
    forbids a written buffer bound twice. ``buffers`` are the backend's buffers (with an
    ``nbytes`` in bytes), ``scalars`` ``(dtype, value)`` pairs. ``buffer_arg(buffer)`` is a
    buffer's argument (raising :class:`LaunchError` for a freed one), ``alias_key(argument)``
    what two arguments of the same memory share, ``scalar_arg(dtype, value)`` a scalar's
    argument.

    Raises:
        LaunchError: wrong numbers of buffers or scalars, a buffer not a whole number of its
            elements, a written buffer bound twice, a scalar of another dtype.
    """
    expected, wanted = meta["buffers"], meta["scalars"]
    if len(buffers) != len(expected) or len(scalars) != len(wanted):
        raise LaunchError(
            f"launch {name!r}: expected {len(expected)} buffers and {len(wanted)} scalars "
            f"({', '.join(b[0] for b in [*expected, *wanted])}), got {len(buffers)} and "
            f"{len(scalars)}")
    args: list[Any] = []
    for (bname, dtype, _), buf in zip(expected, buffers, strict=True):
        arg = buffer_arg(buf)
        if buf.nbytes % dtype_bytes(dtype):
            raise LaunchError(f"launch {name!r}: buffer {bname!r} of {buf.nbytes} bytes is "
                              f"not a whole number of {dtype} elements")
        args.append(arg)
    if meta.get("noalias", True):  # a written buffer must not be bound twice; read-only
        keys = [alias_key(a) for a in args]  # ones may (f(x, x)), as on the CPU backend
        for (bname, _, access), key in zip(expected, keys, strict=True):
            if access != "read" and keys.count(key) > 1:
                raise LaunchError(
                    f"launch {name!r}: written buffer {bname!r} is also bound to another "
                    "parameter; compile with options={'noalias': False} to allow aliasing "
                    "buffers")
    for (sname, dtype), (given, value) in zip(wanted, scalars, strict=True):
        if given != dtype:
            raise LaunchError(f"launch {name!r}: scalar {sname!r} must be {dtype}, "
                              f"got {given}")
        args.append(scalar_arg(dtype, value))
    return args
