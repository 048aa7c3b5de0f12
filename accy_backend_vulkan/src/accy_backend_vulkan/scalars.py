"""Launch scalars of the Vulkan driver (mixin): packing, push constants or a scalar buffer.

The scalars of a launch are packed into the bytes of :func:`accy_backend_vulkan.target.
push_layout` (each scalar at its offset, then the total work-group count). They travel as
push constants when the block fits the device's ``maxPushConstantsSize``; otherwise the
artifact names a ``scalar_binding`` and the same bytes go into a small storage buffer bound
there (:mod:`accy_backend_vulkan.scalar_words` reads it). Scalar buffers are cached per
loaded kernel by content (launches queued with the same scalars share one); at most
:data:`SCALAR_BUFFER_CACHE` per kernel, the oldest is freed (after the queue drains).
"""

from __future__ import annotations

import struct
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

import numpy as np
from accy.errors import LaunchError
from accy.kernel.ir import NUMPY_DTYPES

__all__ = ["SCALAR_BUFFER_CACHE", "ScalarArguments"]

SCALAR_BUFFER_CACHE = 16
#: struct format per kernel dtype; bool and 8/16-bit integers travel as one 32-bit word
_PACK = {"f32": "<f", "f64": "<d", "i32": "<i", "i64": "<q", "u32": "<I", "bool": "<i",
         "i8": "<i", "i16": "<i", "u8": "<I", "u16": "<I", "u64": "<Q"}
_NUMPY = NUMPY_DTYPES


class ScalarArguments:
    """Pack launch scalars; the driver provides ``allocate``/``write``/``free``."""

    def _pack_scalars(self, loaded: Any, scalars: Sequence[Any], groups: int) -> bytes:
        """Return the scalar block of one launch (``push_layout`` bytes).

        Raises:
            LaunchError: wrong number of scalars or a scalar of the wrong dtype.
        """
        meta = loaded.artifact.metadata
        expected = meta["scalars"]
        name = loaded.artifact.kernel_name
        if len(scalars) != len(expected):
            raise LaunchError(
                f"launch {name!r}: expected {len(expected)} scalars "
                f"({', '.join(s[0] for s in expected)}), got {len(scalars)}"
            )
        data = bytearray(loaded.push_bytes)
        for (sname, dtype), (given, value), offset in zip(
            expected, scalars, loaded.push_fields, strict=False
        ):
            if given != dtype:
                raise LaunchError(f"launch {name!r}: scalar {sname!r} must be {dtype}, got {given}")
            v = _NUMPY[dtype](value).item()
            struct.pack_into(_PACK[dtype], data, offset, int(v) if dtype == "bool" else v)
        struct.pack_into("<i", data, loaded.push_fields[-1], groups)
        return bytes(data)

    def _scalar_arguments(
        self, loaded: Any, scalars: Sequence[Any], groups: int
    ) -> tuple[bytes, list[Any]]:
        """Return ``(push-constant bytes, extra buffers to bind after the kernel's)``."""
        data = self._pack_scalars(loaded, scalars, groups)
        if loaded.artifact.metadata.get("scalar_binding") is None:
            return data, []
        cache: OrderedDict[bytes, Any] = loaded.scalar_buffers
        buf = cache.get(data)
        if buf is None:
            buf = self.allocate(len(data))  # type: ignore[attr-defined]
            self.write(buf, np.frombuffer(data, np.uint8))  # type: ignore[attr-defined]
            cache[data] = buf
            while len(cache) > SCALAR_BUFFER_CACHE:
                _, old = cache.popitem(last=False)
                self.free(old)  # type: ignore[attr-defined]  # waits for queued launches
        else:
            cache.move_to_end(data)
        return b"", [buf]

    def _release_scalar_buffers(self, loaded: Any) -> None:
        for buf in loaded.scalar_buffers.values():
            self.free(buf)  # type: ignore[attr-defined]
        loaded.scalar_buffers.clear()
