"""The Python frontend: ``accy.jit``, ``accy.numpy``, device arrays and DLPack.

See ``docs/frontend.md`` for tracing semantics. Importing this package does not import
LLVM or any backend; backends open on the first compile or ``asarray``.
"""

from accy.frontend import device_ops as _device_ops
from accy.frontend.device_array import DeviceArray, asarray
from accy.frontend.dlpack_import import from_dlpack
from accy.frontend.errors import TracerConversionError, UnsupportedFunctionError
from accy.frontend.jit import Jitted, jit
from accy.frontend.methods import NAMES as _NAMES  # noqa: F401 - installs Tracer's methods
from accy.frontend.tracer import Tracer

_device_ops.install()

__all__ = [
    "DeviceArray", "Jitted", "Tracer", "TracerConversionError", "UnsupportedFunctionError",
    "asarray", "from_dlpack", "jit",
]
