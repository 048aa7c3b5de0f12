"""Launch arguments of the CPU backend: buffer addresses and scalar slots, checked.

A kernel's entry point takes ``(buffers, scalars, begin, end, groups)``: ``buffers`` a
ctypes array of addresses (outputs, inputs, optional element-count buffer, in the kernel's
order), ``scalars`` 8-byte slots, one per scalar, each value packed little-endian at the
start of its slot.
"""

from __future__ import annotations

import ctypes
import struct
from collections.abc import Sequence
from typing import Any

import numpy as np
from accy.errors import LaunchError
from accy.kernel.dtypes import NUMPY_DTYPES, dtype_bytes

__all__ = ["check_workgroup", "check_written_buffers_disjoint", "live_kernel", "pack_pointers",
           "pack_scalars"]


def check_written_buffers_disjoint(name: str, expected: list,
                                   spans: Sequence[tuple[int, int]]) -> None:
    """Kernels mark buffer pointers ``noalias``: a buffer the kernel writes must not overlap
    any other bound buffer (read-only buffers may share memory, e.g. ``f(x, x)``).

    Args:
        spans: each bound buffer's ``(first byte address, one past its last)``, launch order.

    Raises:
        LaunchError: a written buffer overlaps another one.
    """
    for i, ((bname, _, access), (lo, hi)) in enumerate(zip(expected, spans, strict=True)):
        if access == "read" or hi == lo:
            continue
        for j, (lo2, hi2) in enumerate(spans):
            if j != i and lo < hi2 and lo2 < hi:
                raise LaunchError(
                    f"launch {name!r}: written buffer {bname!r} overlaps buffer "
                    f"{expected[j][0]!r}; compile with options={{'noalias': False}} to allow "
                    "aliasing buffers"
                )


#: struct format of each scalar dtype in its 8-byte slot
PACK = {"f32": "<f", "f64": "<d", "i32": "<i", "i64": "<q", "u32": "<I", "bool": "<B",
        "i8": "<b", "u8": "<B", "i16": "<h", "u16": "<H", "u64": "<Q"}


def pack_pointers(name: str, meta: dict[str, Any], buffers: Sequence[Any]) -> Any:
    """A ctypes array of the buffers' addresses, in launch order, after checking each is a
    cpu buffer (``numpy.uint8``) of whole elements and, for ``noalias`` kernels, that written
    buffers overlap nothing.

    Raises:
        LaunchError: wrong count, a foreign or ragged buffer, or aliasing written buffers.
    """
    expected = meta["buffers"]
    if len(buffers) != len(expected):
        raise LaunchError(
            f"launch {name!r}: expected {len(expected)} buffers "
            f"({', '.join(b[0] for b in expected)}), got {len(buffers)}"
        )
    addresses = []
    for (bname, dtype, _), buf in zip(expected, buffers, strict=True):
        if not isinstance(buf, np.ndarray) or buf.dtype != np.uint8:
            raise LaunchError(
                f"launch {name!r}: buffer {bname!r} must be a cpu buffer "
                f"(numpy uint8 array from allocate), got {type(buf).__name__}"
            )
        if buf.nbytes % dtype_bytes(dtype):
            raise LaunchError(
                f"launch {name!r}: buffer {bname!r} of {buf.nbytes} bytes is "
                f"not a whole number of {dtype} elements"
            )
        addresses.append(buf.ctypes.data)  # ~2 us each: read once per launch
    if meta.get("noalias", True) and len(addresses) > 1:
        check_written_buffers_disjoint(
            name, expected, [(a, a + b.nbytes) for a, b in zip(addresses, buffers, strict=True)])
    return (ctypes.c_void_p * max(1, len(addresses)))(*addresses)


def pack_scalars(name: str, meta: dict[str, Any], scalars: Sequence[Any]) -> Any:
    """The scalars packed into 8-byte slots (a ctypes string buffer), in launch order.

    Raises:
        LaunchError: wrong count or a scalar of another dtype than the kernel's.
    """
    expected = meta["scalars"]
    if len(scalars) != len(expected):
        raise LaunchError(
            f"launch {name!r}: expected {len(expected)} scalars "
            f"({', '.join(s[0] for s in expected)}), got {len(scalars)}"
        )
    slots = ctypes.create_string_buffer(8 * max(1, len(expected)))
    for i, ((sname, dtype), (given, value)) in enumerate(zip(expected, scalars, strict=True)):
        if given != dtype:
            raise LaunchError(f"launch {name!r}: scalar {sname!r} must be {dtype}, got {given}")
        v = NUMPY_DTYPES[dtype](value).item()
        struct.pack_into(PACK[dtype], slots, 8 * i, int(v) if dtype == "bool" else v)
    return slots


def live_kernel(loaded: Any) -> tuple[str, dict[str, Any]]:
    """``(kernel name, metadata)`` of a loaded kernel; LaunchError once it was destroyed."""
    name = loaded.artifact.kernel_name
    if loaded.function is None:
        raise LaunchError(f"launch {name!r}: the kernel was destroyed")
    return name, loaded.metadata


def check_workgroup(name: str, meta: dict[str, Any], geometry: Any) -> None:
    """LaunchError unless ``geometry``'s work-group size is the kernel's."""
    if geometry.workgroup_size != meta["workgroup_size"]:
        raise LaunchError(f"launch {name!r}: workgroup_size {geometry.workgroup_size} "
                          f"differs from the kernel's {meta['workgroup_size']}")
