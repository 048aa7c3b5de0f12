"""Kernel IR: the SIMT-style, scalar, per-work-item program every backend lowers to LLVM.

A :class:`Kernel` is run by every work-item of every work-group of a 1-D grid; its body
guards its own bounds. Expressions are immutable trees carrying their dtype; statements are
immutable records. Dtypes are strings:

- ``"f32"``, ``"f64"``: IEEE floats.
- ``"i32"``, ``"i64"``: signed two's-complement integers (wrap on overflow).
- ``"i8"``, ``"i16"``: narrow signed integers (wrap on overflow, as numpy's int8/int16).
- ``"u8"``, ``"u16"``, ``"u32"``, ``"u64"``: unsigned integers (unsigned compare, div, rem,
  shr and conversion; wrap on overflow).
- ``"bool"``: ``i1`` in registers, one byte per element (0 or 1) in buffers.

Example (elementwise ``y = 2 * x`` guarded by ``n``)::

    gid = ThreadId("global")
    Kernel(
        "scale", buffers=(BufferParam("y", "f32", "write"), BufferParam("x", "f32", "read")),
        scalars=(ScalarParam("n", "i32"),), workgroup_size=256,
        body=(If(binary("lt", gid, Var("n", "i32")),
                 (Store("y", gid, binary("mul", const(2.0, "f32"), Load("x", gid, "f32"))),)),),
    )

The convenience constructors (:func:`const`, :func:`binary`, :func:`unary`, :func:`select`,
:func:`cast`) infer dtypes and raise :class:`accy.errors.VerifyError` on mismatches.
"""

from __future__ import annotations

from accy.errors import VerifyError
from accy.hashing import sha256
from accy.kernel.dtypes import (  # re-exported: the tables live apart (cheap to import)
    _BYTES,
    DTYPES,
    FLOAT_DTYPES,
    INT_DTYPES,
    NUMPY_DTYPES,
    UNSIGNED_DTYPES,
    dtype_bytes,
)
from accy.records import record

__all__ = [
    "walk_nodes",
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
    "Expr",
    "Fma",
    "For",
    "If",
    "Kernel",
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
    "cast",
    "const",
    "dtype_bytes",
    "select",
    "unary",
]

UNARY_OPS = frozenset(
    {
        "neg",
        "abs",
        "exp",
        "log",
        "sqrt",
        "rsqrt",
        "tanh",
        "sin",
        "cos",
        "floor",
        "ceil",
        "exp2",
        "log2",
        "not",
    }
)
COMPARE_OPS = frozenset({"eq", "ne", "lt", "le", "gt", "ge"})
BINARY_OPS = (
    frozenset(
        {
            "add",
            "sub",
            "mul",
            "div",
            "rem",
            "min",
            "max",
            "pow",
            "and",
            "or",
            "xor",
            "shl",
            "shr",
            "mulhi",
        }
    )
    | COMPARE_OPS
)
ATOMIC_OPS = frozenset({"add", "min", "max", "xchg", "or", "and"})
THREAD_ID_KINDS = frozenset({"global", "local", "group", "num_groups"})
ACCESS_MODES = frozenset({"read", "write", "readwrite"})


# ---------------------------------------------------------------------------------- expressions


@record(slots=True)
class Const:
    """A literal ``value`` (Python int/float/bool) of ``dtype``."""

    value: int | float | bool
    dtype: str


@record(slots=True)
class Var:
    """A reference to a ``Let``/``For`` variable or a scalar parameter named ``name``."""

    name: str
    dtype: str


@record(slots=True)
class ThreadId:
    """The work-item's ``kind`` id: ``global``, ``local``, ``group`` or ``num_groups`` (i32)."""

    kind: str
    dtype: str = "i32"


@record(slots=True)
class Unary:
    """``op(x)``; ``dtype`` is the result dtype (same as ``x.dtype``)."""

    op: str
    x: Expr
    dtype: str


@record(slots=True)
class Binary:
    """``op(a, b)``; operands share a dtype; compares produce ``"bool"``.

    ``mulhi`` is the high 32 bits of the 64-bit product (u32 or i32 operands); ``shr`` is
    arithmetic for signed, logical for u32; ``div``/``rem`` on integers truncate toward zero.
    """

    op: str
    a: Expr
    b: Expr
    dtype: str


@record(slots=True)
class Select:
    """``a if cond else b``; ``cond`` is bool, ``a`` and ``b`` share ``dtype``."""

    cond: Expr
    a: Expr
    b: Expr
    dtype: str


@record(slots=True)
class Fma:
    """``a * b + x`` with the product and sum fused or not (LLVM ``llvm.fmuladd``): the
    target picks a hardware FMA where it has one, so float results may differ from
    ``a * b + x`` by the product's rounding. Integers: wrapping ``a * b + x``. Operands and
    result share ``dtype`` (not bool)."""

    a: Expr
    b: Expr
    x: Expr
    dtype: str


@record(slots=True)
class Cast:
    """Numeric conversion of ``x`` to ``dtype``; float→int truncates, →bool is ``x != 0``."""

    x: Expr
    dtype: str


@record(slots=True)
class Bitcast:
    """Reinterpret the bits of ``x`` as ``dtype`` (same width, not bool)."""

    x: Expr
    dtype: str


@record(slots=True)
class Load:
    """``buffer[index]``: element ``index`` (i32/i64/u32, in elements) of a buffer parameter."""

    buffer: str
    index: Expr
    dtype: str


@record(slots=True)
class SharedLoad:
    """``array[index]`` of a work-group shared array."""

    array: str
    index: Expr
    dtype: str


Expr = (Const | Var | ThreadId | Unary | Binary | Select | Fma | Cast | Bitcast | Load
        | SharedLoad)

# ----------------------------------------------------------------------------------- statements


@record(slots=True)
class Let:
    """Declare mutable variable ``name`` (dtype = ``value.dtype``) initialised to ``value``."""

    name: str
    value: Expr


@record(slots=True)
class Assign:
    """Assign ``value`` to a previously declared variable ``name`` (same dtype)."""

    name: str
    value: Expr


@record(slots=True)
class Store:
    """``buffer[index] = value`` on a ``write``/``readwrite`` buffer."""

    buffer: str
    index: Expr
    value: Expr


@record(slots=True)
class SharedStore:
    """``array[index] = value`` on a work-group shared array."""

    array: str
    index: Expr
    value: Expr


@record(slots=True)
class For:
    """``for var in range(start, stop, step): body``; var dtype = ``start.dtype``, step > 0."""

    var: str
    start: Expr
    stop: Expr
    step: Expr
    body: tuple[Stmt, ...]


@record(slots=True)
class If:
    """``if cond: then else: orelse`` with a bool ``cond``."""

    cond: Expr
    then: tuple[Stmt, ...]
    orelse: tuple[Stmt, ...] = ()


@record(slots=True)
class Barrier:
    """Work-group execution and shared-memory barrier; only in uniform control flow."""


@record(slots=True)
class AtomicRMW:
    """Atomic ``buffer[index] = op(buffer[index], value)``; the old value is discarded."""

    op: str
    buffer: str
    index: Expr
    value: Expr


@record(slots=True)
class Prefetch:
    """A hint to bring element ``index`` of buffer ``buffer`` (any access mode) into the cache
    before it is read; no effect on results. Any index is valid, in range or not (the hint
    never faults). Uniform: the index and the control flow around it must not depend on the
    thread id or on loaded data (as for ``Barrier``); the work-group issues it once. CPU:
    ``llvm.prefetch`` (read, locality 3) between the work-item loops, so it ends a barrier
    region as a ``Barrier`` does (put it next to one to keep the regions as they are); GPU
    targets (SPIR-V, PTX, OpenCL) drop it."""

    buffer: str
    index: Expr


Stmt = Let | Assign | Store | SharedStore | For | If | Barrier | AtomicRMW | Prefetch

# ------------------------------------------------------------------------------------- kernels


@record(slots=True)
class BufferParam:
    """A device buffer parameter of element dtype ``dtype``; ``access`` read/write/readwrite."""

    name: str
    dtype: str
    access: str = "read"


@record(slots=True)
class ScalarParam:
    """A by-value scalar parameter (read as ``Var(name, dtype)`` in the body)."""

    name: str
    dtype: str


@record(slots=True)
class SharedArray:
    """A work-group shared array of ``size_elems`` elements of ``dtype``."""

    name: str
    dtype: str
    size_elems: int


@record(slots=True)
class Kernel:
    """A compute kernel: parameters in launch order, body, work-group size (work-items).

    Launch order: ``buffers`` (outputs first, then inputs, then an optional element-count
    buffer — the producer decides), then ``scalars``.
    """

    name: str
    buffers: tuple[BufferParam, ...]
    scalars: tuple[ScalarParam, ...]
    body: tuple[Stmt, ...]
    workgroup_size: int
    shared: tuple[SharedArray, ...] = ()

    def to_text(self) -> str:
        """Return the readable, canonical text form (stable; basis of :meth:`fingerprint`)."""
        from accy.kernel.printer import kernel_to_text

        return kernel_to_text(self)

    def fingerprint(self) -> str:
        """Return the sha256 hex digest of :meth:`to_text` (stable across processes)."""
        return sha256(self.to_text().encode()).hexdigest()

    def __str__(self) -> str:
        return self.to_text()


# ------------------------------------------------------------------------ convenience builders


def _check_dtype(dtype: str) -> str:
    if dtype not in _BYTES:
        raise VerifyError(f"unknown dtype {dtype!r}; known: {', '.join(DTYPES)}")
    return dtype


def const(value: float | bool, dtype: str) -> Const:
    """Return ``Const(value, dtype)`` with ``value`` normalised to the dtype's Python type.

    Raises:
        VerifyError: unknown dtype.
    """
    _check_dtype(dtype)
    if dtype == "bool":
        return Const(bool(value), dtype)
    if dtype in FLOAT_DTYPES:
        return Const(float(value), dtype)
    return Const(int(value), dtype)


def unary(op: str, x: Expr) -> Unary:
    """Return ``Unary(op, x, x.dtype)``.

    Raises:
        VerifyError: unknown op, or float-only op on an integer (``not`` needs bool/int).
    """
    if op not in UNARY_OPS:
        raise VerifyError(f"unknown unary op {op!r}; known: {', '.join(sorted(UNARY_OPS))}")
    return Unary(op, x, x.dtype)


def binary(op: str, a: Expr, b: Expr) -> Binary:
    """Return ``Binary(op, a, b, dtype)`` with dtype ``"bool"`` for compares else ``a.dtype``.

    Raises:
        VerifyError: unknown op or operand dtypes differ.
    """
    if op not in BINARY_OPS:
        raise VerifyError(f"unknown binary op {op!r}; known: {', '.join(sorted(BINARY_OPS))}")
    if a.dtype != b.dtype:
        raise VerifyError(
            f"binary {op!r}: operand dtypes must match, got {a.dtype} and {b.dtype}; cast one"
        )
    return Binary(op, a, b, "bool" if op in COMPARE_OPS else a.dtype)


def select(cond: Expr, a: Expr, b: Expr) -> Select:
    """Return ``Select(cond, a, b, a.dtype)``.

    Raises:
        VerifyError: ``cond`` is not bool or ``a``/``b`` dtypes differ.
    """
    if cond.dtype != "bool":
        raise VerifyError(f"select: condition must be bool, got {cond.dtype}")
    if a.dtype != b.dtype:
        raise VerifyError(f"select: branch dtypes must match, got {a.dtype} and {b.dtype}")
    return Select(cond, a, b, a.dtype)


def cast(x: Expr, dtype: str) -> Expr:
    """Return ``Cast(x, dtype)``, or ``x`` itself when it already has ``dtype``."""
    _check_dtype(dtype)
    return x if x.dtype == dtype else Cast(x, dtype)


def walk_nodes(stmts: tuple[Stmt, ...]):  # noqa: ANN201 - generator of IR nodes
    """Yield every statement and expression node under ``stmts`` (any order)."""
    stack: list[object] = list(stmts)
    while stack:
        node = stack.pop()
        yield node
        for name in getattr(node, "__slots__", ()):
            value = getattr(node, name)
            if isinstance(value, tuple):
                stack.extend(v for v in value if not isinstance(v, str | int | float))
            elif hasattr(value, "__slots__") and not isinstance(value, str):
                stack.append(value)
