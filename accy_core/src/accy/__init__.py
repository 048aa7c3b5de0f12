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
    "AccyError", "Builder", "DType", "Module", "TensorType", "__version__", "compile",
    "parse_module",
]


def compile(module: Module, backend: str = "cpu", **options: Any) -> Executable:
    """Compile ``module`` for ``backend``; see :func:`accy.runtime.compile`."""
    from accy.runtime import compile as _compile

    return _compile(module, backend=backend, **options)
