"""Trace state and operand conversion shared by the tracer and ``accy.numpy``.

A :class:`Trace` wraps the :class:`accy.ir.FunctionBuilder` that a jitted function is being
traced into. The innermost active trace is kept per thread (:func:`current_trace`), so
``anp.zeros((3,))`` inside a traced function becomes an IR constant while the same call
outside any trace returns a numpy array.

Dtype rules (documented in ``docs/frontend.md``): Python scalars and 0-d numpy scalars are
*weak*: they take the dtype of the array they meet when the kinds agree (``f32 * 2.0`` stays
f32, ``i32 + 1`` stays i32); a float scalar with an integer array gives f32. Arrays of
different dtypes promote as numpy promotes integers (the smallest integer that holds both:
``u8 ∘ i8 → i16``, ``u32 ∘ i32 → i64``, ``u64 ∘ i64 → f64``), bool below everything, and any
int with f32 → f32 (JAX's table, not numpy's ``i32 ∘ f32 → f64``).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

from accy.errors import InputError
from accy.ir import DType, FunctionBuilder, TensorType, Value

__all__ = [
    "Trace", "current_trace", "default_dtype", "promote", "result_dtype", "tracing",
    "user_location",
]

_STATE = threading.local()


def user_location() -> str | None:
    """``file:line`` of the user's code that is being traced (outside the accy package)."""
    from accy.ir.builder import user_location as _loc

    return _loc()


class Trace:
    """One function being traced: its builder and a counter of emitted constants.

    A loop body is traced into a function of its own whose ``parent`` is the trace the loop
    is in; arrays of enclosing traces used in the body are *captured*: each becomes an extra
    body parameter (in first-use order, after the fixed ones) and ``captured`` lists the
    values the loop passes for them.

    Attributes:
        fb: the function builder ops are appended to.
        name: the traced function's name (for messages).
        parent: the enclosing trace of a loop body, else None.
        captured: values of ``parent`` passed for the captured parameters, in order.
        functions: loop-body functions traced under this root trace, in order.
    """

    def __init__(self, fb: FunctionBuilder, name: str, parent: Trace | None = None) -> None:
        self.fb = fb
        self.name = name
        self.parent = parent
        self.captured: list[Value] = []
        self._params: dict[Value, Value] = {}
        self.functions: list[Any] = []

    @property
    def root(self) -> Trace:
        t = self
        while t.parent is not None:
            t = t.parent
        return t

    def encloses(self, other: Trace) -> bool:
        """Whether ``other`` is an enclosing trace of this one."""
        t = self.parent
        while t is not None:
            if t is other:
                return True
            t = t.parent
        return False

    def capture(self, owner: Trace, v: Value) -> Value:
        """The value standing for ``owner``'s ``v`` in this trace (a new body parameter the
        first time; through every trace in between)."""
        if owner is self:
            return v
        if self.parent is None or not self.encloses(owner):
            return v  # not ours to translate: trace_of reports the leaked tracer
        outer = self.parent.capture(owner, v)
        p = self._params.get(outer)
        if p is None:
            p = self._params[outer] = self.fb.function.body.add_arg(outer.type)
            self.captured.append(outer)
        return p


def current_trace() -> Trace | None:
    """The innermost active trace on this thread, or None outside any jitted function."""
    stack = getattr(_STATE, "stack", None)
    return stack[-1] if stack else None


@contextmanager
def tracing(trace: Trace) -> Iterator[Trace]:
    """Make ``trace`` the current trace for the duration of the ``with`` block."""
    stack = getattr(_STATE, "stack", None)
    if stack is None:
        stack = _STATE.stack = []
    stack.append(trace)
    try:
        yield trace
    finally:
        stack.pop()


def default_dtype(x: bool | int | float) -> DType:
    """accy's dtype for a lone Python scalar: bool, i32 for int, f32 for float."""
    if isinstance(x, (bool, np.bool_)):
        return DType.BOOL
    if isinstance(x, (int, np.integer)):
        return DType.I32
    return DType.F32


def result_dtype(a: DType, b: DType) -> DType:
    """The promoted dtype of two array dtypes (see the module docstring)."""
    if a == b or b == DType.BOOL:
        return a
    if a == DType.BOOL:
        return b
    if a.is_int and b.is_int:
        return DType.parse(np.promote_types(a.numpy, b.numpy))
    if a.is_float and b.is_float:
        return DType.F64 if DType.F64 in (a, b) else DType.F32
    return a if a.is_float else b


def _weak_dtype(scalar: Any, other: DType) -> DType:
    kind = default_dtype(scalar)
    if kind.is_float:
        return other if other.is_float else DType.F32
    if kind.is_int:
        return other if (other.is_int or other.is_float) else DType.I32
    return other


def is_weak(x: Any) -> bool:
    """Python scalars and 0-d numpy scalars: they adopt the other operand's dtype."""
    return isinstance(x, (bool, int, float, np.generic))


def promote(dtypes: list[DType | None], weak: list[Any]) -> DType:
    """Common dtype of strong ``dtypes`` (None for weak operands) and the ``weak`` scalars."""
    strong = [d for d in dtypes if d is not None]
    if not strong:
        out = default_dtype(weak[0])
        for w in weak[1:]:
            out = result_dtype(out, default_dtype(w))
        return out
    out = strong[0]
    for d in strong[1:]:
        out = result_dtype(out, d)
    for w in weak:
        out = _weak_dtype(w, out)
    return out


def array_dtype(arr: np.ndarray, what: str) -> DType:
    """accy dtype of host array ``arr``.

    Raises:
        InputError: a numpy dtype accy has no element type for (float16, ...).
    """
    try:
        return DType.parse(arr.dtype)
    except ValueError:
        known = ("float32, float64, int8, int16, int32, int64, uint8, uint16, uint32, uint64, "
                 "bool")
        raise InputError(
            f"{what}: numpy dtype {arr.dtype} is not supported by accy (known: {known}); "
            f"convert with .astype(np.float32) or another supported dtype"
        ) from None


def constant(fb: FunctionBuilder, value: Any, dtype: DType | None = None) -> Value:
    """Emit ``value`` (scalar or host array) as a ``tensor.constant`` of ``dtype``."""
    arr = np.asarray(value)
    dt = dtype if dtype is not None else array_dtype(arr, "constant")
    return fb.constant(TensorType(dt, arr.shape), arr)
