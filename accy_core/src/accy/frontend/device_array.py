"""Device arrays: data that stays on a backend between jitted calls.

``accy.asarray(np_array, backend="cpu")`` puts an array on a backend; a jitted function
called with device arrays runs there and returns device arrays, with no host copy in
between. ``.numpy()`` / ``np.asarray(d)`` copy back to the host; ``__dlpack__`` shares
memory on backends whose buffers live in host memory (the CPU backend), see
:mod:`accy.frontend.dlpack`. The backend buffer is freed when the array is garbage-collected
(or at :meth:`DeviceArray.delete`).

On a host-memory backend ``asarray`` wraps the numpy array's memory without copying
(numpy's ``asarray`` rule); writing to that numpy array afterwards changes the device
array. Pass ``copy=True`` to detach.
"""

from __future__ import annotations

import weakref
from typing import Any

import numpy as np

from accy.errors import InputError
from accy.frontend.trace import array_dtype
from accy.ir import DType, TensorType

__all__ = ["DeviceArray", "asarray"]


def _release(backend: Any, buffer: Any, owner: Any) -> None:
    del owner  # the host memory the buffer wraps may go now
    backend.free(buffer)


def _bytes(arr: np.ndarray) -> np.ndarray:
    return arr.reshape(-1).view(np.uint8)


class DeviceArray:
    """An immutable array held in a backend buffer.

    Attributes:
        shape: extent per axis, in elements.
        dtype: numpy dtype of the elements (float32, float64, int32, int64, uint32, bool).
        backend_name: the backend it lives on (``"cpu"``).
        buffer: the backend's buffer handle (dense, row-major, ``nbytes`` bytes).
    """

    __accy_device_array__ = True
    __array_priority__ = 100

    def __init__(self, backend: Any, buffer: Any, type: TensorType, backend_name: str,
                 owner: Any = None, host_memory: bool | None = None) -> None:
        self._backend = backend
        self.buffer = buffer
        self.type = type
        self.backend_name = backend_name
        self._host = (host_memory if host_memory is not None
                      else "host_memory" in backend.capabilities().features)
        self._finalizer = weakref.finalize(self, _release, backend, buffer, owner)

    # ------------------------------------------------------------ metadata
    @property
    def shape(self) -> tuple[int, ...]:
        return self.type.shape

    @property
    def dtype(self) -> np.dtype:
        return self.type.dtype.numpy

    @property
    def ndim(self) -> int:
        return self.type.rank

    @property
    def size(self) -> int:
        return self.type.num_elements

    @property
    def nbytes(self) -> int:
        return self.type.nbytes

    @property
    def backend(self) -> Any:
        """The live backend object the buffer belongs to."""
        return self._backend

    @property
    def is_deleted(self) -> bool:
        return not self._finalizer.alive

    def __repr__(self) -> str:
        return f"DeviceArray<{self.type} on {self.backend_name}>"

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of a 0-d device array")
        return self.shape[0]

    # ------------------------------------------------------------ host access
    def _check_alive(self) -> None:
        if not self._finalizer.alive:
            raise InputError(f"{self!r} was deleted; keep a reference or re-create it with "
                             "accy.asarray")

    def host_view(self) -> np.ndarray | None:
        """A numpy view of the buffer's memory (no copy) on host-memory backends, else None."""
        self._check_alive()
        if not self._host:
            return None
        return self._backend.host_view(self.buffer, self.dtype, self.shape)

    def numpy(self) -> np.ndarray:
        """A host copy (numpy array of ``shape`` and ``dtype``)."""
        self._check_alive()
        view = self.host_view()
        if view is not None:
            return view.copy()
        out = np.empty(self.shape, dtype=self.dtype)
        if out.nbytes:
            self._backend.read(self.buffer, _bytes(out))
        return out

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        arr = self.numpy()
        return arr if dtype is None else arr.astype(dtype)

    def __dlpack__(self, *, stream: Any = None, max_version: Any = None, dl_device: Any = None,
                   copy: Any = None) -> Any:
        from accy.frontend.dlpack import export_dlpack

        return export_dlpack(self, stream=stream, max_version=max_version, copy=copy)

    def __dlpack_device__(self) -> tuple[int, int]:
        from accy.frontend.dlpack import dlpack_device

        return dlpack_device(self)

    def block_until_ready(self) -> DeviceArray:
        """Wait for pending work on the backend; returns ``self``."""
        self._backend.synchronize()
        return self

    def delete(self) -> None:
        """Free the buffer now (later use raises InputError)."""
        self._finalizer()


def _open(backend: str) -> Any:
    from accy.plugins import open_backend

    return open_backend(backend)


def asarray(x: Any, backend: str = "cpu", dtype: Any = None, copy: bool | None = None
            ) -> DeviceArray:
    """Put ``x`` (numpy array, array-like, DLPack producer, device array) on ``backend``.

    Shapes and dtypes are kept (float32 | float64 | int32 | int64 | uint32 | bool). On a
    host-memory backend a C-contiguous numpy array is wrapped without a copy unless
    ``copy=True``; elsewhere the data is written once to a new device buffer.

    Raises:
        InputError: an unsupported dtype (float16, int8, ...) — the message says how to cast.
        BackendUnavailable: unknown backend or one that cannot run here.
    """
    if isinstance(x, DeviceArray) and x.backend_name == backend and dtype is None and not copy:
        return x
    if isinstance(x, DeviceArray):
        x = x.numpy()
    elif not isinstance(x, np.ndarray) and hasattr(x, "__dlpack__"):
        x = np.from_dlpack(x)
    arr = np.asarray(x)
    if dtype is not None:
        arr = arr.astype(DType.parse(dtype).numpy)
    type = TensorType(array_dtype(arr, "accy.asarray"), arr.shape)
    be = _open(backend)
    if copy:
        arr = arr.copy()
    if "host_memory" in be.capabilities().features and arr.flags.c_contiguous \
            and arr.flags.writeable and hasattr(be, "import_host"):
        buf = be.import_host(arr)
        if buf is not None:
            return DeviceArray(be, buf, type, backend, owner=arr)
    arr = np.ascontiguousarray(arr)
    from accy.runtime.resources import MIN_BUFFER_BYTES  # an empty array: whole elements

    buf = be.allocate(max(arr.nbytes, MIN_BUFFER_BYTES))
    if arr.nbytes:
        be.write(buf, _bytes(arr))
    return DeviceArray(be, buf, type, backend)
