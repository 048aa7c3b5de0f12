"""DLPack exchange for device arrays (https://dmlc.github.io/dlpack/latest/).

On a backend whose buffers are host memory (feature ``host_memory``: the CPU backend) a
device array exports its buffer as a kCPU DLPack tensor without a copy, and
``accy.from_dlpack`` (:mod:`accy.frontend.dlpack_import`) wraps any kCPU producer
(numpy, torch CPU tensors, ...) without a copy, so ``np.from_dlpack(accy.from_dlpack(a))``
shares ``a``'s memory. Other backends refuse with an UnsupportedError that names
``.numpy()`` as the copy path.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from accy.errors import UnsupportedError

if TYPE_CHECKING:
    from accy.frontend.device_array import DeviceArray

__all__ = ["dlpack_device", "export_dlpack"]

_KDL_CPU = 1


class _HostWindow:
    """Exposes a device array's host memory through ``__array_interface__``; keeping the
    exported numpy array alive keeps the device array (and its buffer) alive."""

    def __init__(self, owner: DeviceArray, view: np.ndarray) -> None:
        self.owner = owner
        self.__array_interface__ = dict(view.__array_interface__)


def host_array(d: DeviceArray) -> np.ndarray:
    """A writable numpy array sharing ``d``'s memory; it keeps ``d`` alive.

    Raises:
        UnsupportedError: the backend's buffers are not host memory.
    """
    view = d.host_view()
    if view is None:
        raise UnsupportedError(
            f"DLPack export of {d!r}: backend {d.backend_name!r} has no host-visible "
            "buffers, expected a backend with feature host_memory; copy with .numpy()",
            feature="dlpack", backend=d.backend_name, alternative=".numpy()")
    return np.asarray(_HostWindow(d, view))


def export_dlpack(d: DeviceArray, *, stream: Any = None, max_version: Any = None,
                  copy: Any = None) -> Any:
    """``d.__dlpack__``: a DLPack capsule over ``d``'s host memory (no copy)."""
    arr = host_array(d) if not copy else d.numpy()
    kwargs: dict[str, Any] = {}
    if max_version is not None:
        kwargs["max_version"] = max_version
    return arr.__dlpack__(**kwargs)


def dlpack_device(d: DeviceArray) -> tuple[int, int]:
    """``d.__dlpack_device__``: ``(kDLCPU, 0)`` on host-memory backends."""
    if d.host_view() is None:
        raise UnsupportedError(
            f"DLPack device of {d!r}: backend {d.backend_name!r} exposes no DLPack device; "
            "copy with .numpy()", feature="dlpack", backend=d.backend_name,
            alternative=".numpy()")
    return (_KDL_CPU, 0)
