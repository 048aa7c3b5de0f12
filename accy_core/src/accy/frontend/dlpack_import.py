"""``accy.from_dlpack``: wrap a DLPack producer as a device array (see
:mod:`accy.frontend.dlpack` for the export side and the zero-copy rules)."""

from __future__ import annotations

from typing import Any

import numpy as np

from accy.errors import InputError
from accy.frontend.device_array import DeviceArray, asarray

__all__ = ["from_dlpack"]


def from_dlpack(x: Any, backend: str = "cpu") -> DeviceArray:
    """Wrap a DLPack producer (``__dlpack__``) as a device array on ``backend``.

    Zero-copy for kCPU producers on a host-memory backend; otherwise the data is copied.

    Raises:
        InputError: the producer's dtype is not one accy supports.
    """
    if not hasattr(x, "__dlpack__"):
        raise InputError(f"accy.from_dlpack: expected a DLPack producer (an object with "
                         f"__dlpack__), got {type(x).__name__}; use accy.asarray for other data")
    host = np.from_dlpack(x)
    if not host.flags.writeable:  # read-only exports cannot be wrapped in place
        host = host.copy()
    return asarray(host, backend=backend)
