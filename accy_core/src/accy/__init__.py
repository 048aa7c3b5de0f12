"""accy: a plugin-based compiler framework for accelerators.

Build a tensor program with :class:`Builder` (or parse one with :func:`parse_module`),
compile it with :func:`compile` for a backend (``"cpu"`` by default) and call the result
with numpy arrays. Importing accy loads nothing heavy: LLVM and device drivers are loaded
when a backend is opened.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from accy.errors import AccyError
from accy.ir import Builder, DType, Module, TensorType, parse_module

__version__ = "0.1.0"

if TYPE_CHECKING:
    from accy.runtime import Executable

__all__ = [
    "AccyError", "Builder", "DType", "Module", "TensorType", "__version__", "asarray",
    "compile", "from_dlpack", "jit", "parse_module",
]

_FRONTEND = {"jit", "asarray", "from_dlpack", "DeviceArray", "Jitted"}


def __getattr__(name: str) -> Any:
    """Load the Python frontend (``jit``, ``asarray``, ``from_dlpack``) on first use."""
    if name in _FRONTEND:
        import accy.frontend as _frontend

        return getattr(_frontend, name)
    raise AttributeError(f"module 'accy' has no attribute {name!r}")


def compile(module: Module, backend: str = "cpu", **options: Any) -> Executable:
    """Compile ``module`` for ``backend``; see :func:`accy.runtime.compile`."""
    from accy.runtime import compile as _compile

    return _compile(module, backend=backend, **options)
