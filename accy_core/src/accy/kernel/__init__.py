"""Kernel IR facade: data types, printer, verifier, interpreter and the DSL builder.

``verify_kernel``, ``interpret`` (numpy), the printer (``kernel_to_text``, ``expr_to_text``)
and the DSL (``KernelBuilder``, ``E``) are imported
lazily on first attribute access.
"""

from __future__ import annotations

import importlib

from accy.kernel.ir import (
    ACCESS_MODES,
    ATOMIC_OPS,
    BINARY_OPS,
    COMPARE_OPS,
    DTYPES,
    FLOAT_DTYPES,
    INT_DTYPES,
    NUMPY_DTYPES,
    THREAD_ID_KINDS,
    UNARY_OPS,
    UNSIGNED_DTYPES,
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
    dtype_bytes,
    select,
    unary,
)

_LAZY = {
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
    return getattr(importlib.import_module(module), name)
