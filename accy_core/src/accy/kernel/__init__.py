"""Kernel IR facade: data types, printer, verifier, interpreter and the DSL builder.

The dtype tables (:mod:`accy.kernel.dtypes`) load with the package; the IR's classes
(:mod:`accy.kernel.ir`) on first use of one of them, so a process that only loads cached
programs imports no kernel IR.

``verify_kernel``, ``interpret`` (numpy), the printer (``kernel_to_text``, ``expr_to_text``)
and the DSL (``KernelBuilder``, ``E``) are imported
lazily on first attribute access.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from accy.kernel.dtypes import (
    DTYPES,
    FLOAT_DTYPES,
    INT_DTYPES,
    NUMPY_DTYPES,
    UNSIGNED_DTYPES,
    dtype_bytes,
)

if TYPE_CHECKING:
    from accy.kernel.ir import (
        ACCESS_MODES,
        ATOMIC_OPS,
        BINARY_OPS,
        COMPARE_OPS,
        THREAD_ID_KINDS,
        UNARY_OPS,
        Assign,
        AtomicRMW,
        Barrier,
        Binary,
        Bitcast,
        BufferParam,
        Cast,
        Const,
        Expr,
        Fma,
        For,
        If,
        Kernel,
        Let,
        Load,
        Prefetch,
        ScalarParam,
        Select,
        SharedArray,
        SharedLoad,
        SharedStore,
        Stmt,
        Store,
        ThreadId,
        Unary,
        Var,
        binary,
        cast,
        const,
        select,
        unary,
    )

_LAZY = {
    "ACCESS_MODES": "accy.kernel.ir",
    "ATOMIC_OPS": "accy.kernel.ir",
    "BINARY_OPS": "accy.kernel.ir",
    "COMPARE_OPS": "accy.kernel.ir",
    "THREAD_ID_KINDS": "accy.kernel.ir",
    "UNARY_OPS": "accy.kernel.ir",
    "Assign": "accy.kernel.ir",
    "AtomicRMW": "accy.kernel.ir",
    "Barrier": "accy.kernel.ir",
    "Binary": "accy.kernel.ir",
    "Bitcast": "accy.kernel.ir",
    "BufferParam": "accy.kernel.ir",
    "Cast": "accy.kernel.ir",
    "Const": "accy.kernel.ir",
    "Expr": "accy.kernel.ir",
    "Fma": "accy.kernel.ir",
    "For": "accy.kernel.ir",
    "If": "accy.kernel.ir",
    "Kernel": "accy.kernel.ir",
    "Let": "accy.kernel.ir",
    "Load": "accy.kernel.ir",
    "Prefetch": "accy.kernel.ir",
    "ScalarParam": "accy.kernel.ir",
    "Select": "accy.kernel.ir",
    "SharedArray": "accy.kernel.ir",
    "SharedLoad": "accy.kernel.ir",
    "SharedStore": "accy.kernel.ir",
    "Stmt": "accy.kernel.ir",
    "Store": "accy.kernel.ir",
    "ThreadId": "accy.kernel.ir",
    "Unary": "accy.kernel.ir",
    "Var": "accy.kernel.ir",
    "binary": "accy.kernel.ir",
    "cast": "accy.kernel.ir",
    "const": "accy.kernel.ir",
    "select": "accy.kernel.ir",
    "unary": "accy.kernel.ir",
    "ir": "accy.kernel.ir",
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

__all__ = [
    "ACCESS_MODES",
    "ATOMIC_OPS",
    "BINARY_OPS",
    "COMPARE_OPS",
    "DTYPES",
    "FLOAT_DTYPES",
    "INT_DTYPES",
    "UNSIGNED_DTYPES",
    "NUMPY_DTYPES",
    "THREAD_ID_KINDS",
    "UNARY_OPS",
    "Assign",
    "AtomicRMW",
    "Barrier",
    "Binary",
    "Bitcast",
    "BufferParam",
    "Cast",
    "Const",
    "E",
    "Expr",
    "Fma",
    "For",
    "If",
    "Kernel",
    "KernelBuilder",
    "Let",
    "Load",
    "Prefetch",
    "ScalarParam",
    "Select",
    "SharedArray",
    "SharedLoad",
    "SharedStore",
    "Stmt",
    "Store",
    "ThreadId",
    "Unary",
    "Var",
    "binary",
    "call",
    "cast",
    "const",
    "dtype_bytes",
    "expr_to_text",
    "fma",
    "interpret",
    "kernel_to_text",
    "select",
    "unary",
    "verify_kernel",
    "where",
]


def __getattr__(name: str) -> object:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'accy.kernel' has no attribute {name!r}")
    if name == "ir":
        return importlib.import_module(module)
    return getattr(importlib.import_module(module), name)
