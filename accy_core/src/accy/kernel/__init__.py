"""Kernel IR facade: data types, printer, verifier, interpreter and the DSL builder.

The dtype tables (:mod:`accy.kernel.dtypes`) load with the package; the IR's classes
(:mod:`accy.kernel.ir`) on first use of one of them, so a process that only loads cached
programs imports no kernel IR.

``verify_kernel``, ``interpret`` (numpy), the printer (``kernel_to_text``, ``expr_to_text``)
and the DSL (``KernelBuilder``, ``E``) are imported
lazily on first attribute access.

The IR's public names are those of ``accy.kernel.ir.__all__`` (listed there only, so the
facade cannot drift from the module): ``accy.kernel.X`` for one of them imports the IR and
returns ``accy.kernel.ir.X``; ``accy.kernel.__all__`` is made on first use.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from accy.kernel.dtypes import DTYPES as DTYPES
from accy.kernel.dtypes import FLOAT_DTYPES as FLOAT_DTYPES
from accy.kernel.dtypes import INT_DTYPES as INT_DTYPES
from accy.kernel.dtypes import NUMPY_DTYPES as NUMPY_DTYPES
from accy.kernel.dtypes import UNSIGNED_DTYPES as UNSIGNED_DTYPES
from accy.kernel.dtypes import dtype_bytes as dtype_bytes

if TYPE_CHECKING:
    from accy.kernel.dsl import E as E
    from accy.kernel.dsl import KernelBuilder as KernelBuilder
    from accy.kernel.dsl import call as call
    from accy.kernel.dsl import fma as fma
    from accy.kernel.dsl import where as where
    from accy.kernel.interpreter import interpret as interpret
    from accy.kernel.ir import *  # noqa: F403 - the IR's __all__
    from accy.kernel.printer import expr_to_text as expr_to_text
    from accy.kernel.printer import kernel_to_text as kernel_to_text
    from accy.kernel.verifier import verify_kernel as verify_kernel

_DTYPE_NAMES = ("DTYPES", "FLOAT_DTYPES", "INT_DTYPES", "NUMPY_DTYPES", "UNSIGNED_DTYPES",
                "dtype_bytes")
#: the lazily imported names that are not the IR's, and their modules
_ELSEWHERE = {
    "expr_to_text": "accy.kernel.printer",
    "kernel_to_text": "accy.kernel.printer",
    "verify_kernel": "accy.kernel.verifier",
    "interpret": "accy.kernel.interpreter",
    "KernelBuilder": "accy.kernel.dsl",
    "E": "accy.kernel.dsl",
    "call": "accy.kernel.dsl",
    "fma": "accy.kernel.dsl",
    "where": "accy.kernel.dsl",
}
_NOT_FACADE = frozenset({"walk_nodes"})  # in the IR's __all__, reached as accy.kernel.ir.X
_ir_public: frozenset[str] | None = None


def _ir_names() -> frozenset[str]:
    """The names of ``accy.kernel.ir.__all__`` that the facade gives (imports the IR)."""
    global _ir_public
    if _ir_public is None:
        from accy.kernel import ir

        _ir_public = frozenset(ir.__all__) - _NOT_FACADE - frozenset(_DTYPE_NAMES)
    return _ir_public


def __getattr__(name: str) -> object:
    module = _ELSEWHERE.get(name)
    if module is not None:
        return getattr(importlib.import_module(module), name)
    if name == "ir":
        return importlib.import_module("accy.kernel.ir")
    if name == "__all__":
        return sorted({*_DTYPE_NAMES, *_ELSEWHERE, *_ir_names()})
    if not name.startswith("_") and name in _ir_names():
        return getattr(importlib.import_module("accy.kernel.ir"), name)
    raise AttributeError(f"module 'accy.kernel' has no attribute {name!r}")
