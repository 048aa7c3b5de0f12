"""The Python builder: construct tensor IR modules op by op.

Example::

    b = Builder()
    t = b.tensor("f32", (4,))
    fb = b.begin_function("add_mul", params=[t, t, t], results=[t, t])
    s = fb.add(fb.param(0), fb.param(1))
    fb.return_(s, fb.mul(s, fb.param(2)))
    fb.finish()
    module = b.finish()

Every op method infers its result type through the op registry and raises
:class:`accy.errors.VerifyError` at the call that is wrong, naming the op and the user's
source line. Binary ops broadcast their operands numpy-style (inserting
``tensor.broadcast_to``) and accept Python scalars, which become constants of the other
operand's dtype. There is no implicit dtype promotion: cast first.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from accy.errors import VerifyError
from accy.ir.core import Function, Module, Operation, Value
from accy.ir.dtypes import DType
from accy.ir.location import user_location
from accy.ir.ops.registry import get_op_def
from accy.ir.types import TensorType

__all__ = ["Builder", "FunctionBuilder", "user_location"]

Operand = Value | float | int | bool


def broadcast_shapes(op: str, a: tuple[int, ...], b: tuple[int, ...]) -> tuple[int, ...]:
    """numpy's broadcast of two shapes; raise VerifyError naming ``op`` if incompatible."""
    n = max(len(a), len(b))
    pa, pb = (1,) * (n - len(a)) + a, (1,) * (n - len(b)) + b
    out = []
    for x, y in zip(pa, pb, strict=True):
        if x != y and 1 not in (x, y):
            raise VerifyError(
                f"'{op}' op: operand shapes {list(a)} and {list(b)} are not broadcast-compatible",
                op=op,
            )
        out.append(y if x == 1 else x)
    return tuple(out)


def _located(check, op: str, *args: Any) -> Any:
    """Run ``check(op, *args)``; add the user's ``file:line`` to a VerifyError it raises."""
    try:
        return check(op, *args)
    except VerifyError as e:
        loc = user_location()
        if loc is None:
            raise
        raise VerifyError(f"{e.message} (at {loc})", op=op, position=loc) from None


def _scalar(x: bool | float | np.generic, dtype: DType, op: str | None) -> np.ndarray:
    """``x`` as a 0-d array of ``dtype``; VerifyError if that would change its value."""
    with np.errstate(all="ignore"):
        try:
            arr = np.asarray(x, dtype=dtype.numpy)
        except (OverflowError, ValueError):
            arr = None
    exact = arr is not None and (dtype.is_float or bool(arr == x))
    if not exact or (dtype.is_bool and not isinstance(x, (bool, np.bool_))):
        loc = user_location()
        raise VerifyError(
            (f"'{op}' op: " if op else "")
            + f"scalar {x!r} is not a {dtype} value; pass a tensor or cast the other operand"
            + (f" (at {loc})" if loc else ""),
            op=op,
            position=loc,
        )
    return arr


def _int_attr(op: str, name: str, value: Any) -> int:
    """An integer attribute exactly (ints and numpy integers); ``int()`` used to truncate
    ``axis=1.5``, ``seed=1.5`` or ``num_segments=2.5`` silently."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        loc = user_location()
        raise VerifyError(
            f"'{op}' op: {name} must be an integer, got "
            f"{type(value).__name__} {value!r}" + (f" (at {loc})" if loc else ""),
            op=op,
        )
    return int(value)


class Builder:
    """Build a :class:`Module`; one :class:`FunctionBuilder` per function."""

    def __init__(self) -> None:
        self._module = Module()
        self._open: FunctionBuilder | None = None

    @staticmethod
    def tensor(dtype: str | DType, shape: Sequence[int]) -> TensorType:
        """Return the tensor type ``dtype[shape]`` (``shape``: ints >= 0, elements per axis);
        a VerifyError for an unknown dtype or a shape that is not a sequence of such ints."""
        return TensorType(DType.parse(dtype), shape)

    def begin_function(
        self, name: str, params: Sequence[TensorType], results: Sequence[TensorType] | None = None
    ) -> FunctionBuilder:
        """Start function ``name``; ``results`` (optional) is checked by ``return_``."""
        if self._open is not None:
            raise VerifyError(f"function @{self._open.function.name} is still open; call finish()")
        if not re.fullmatch(r"[A-Za-z0-9_.$]+", name):
            raise VerifyError(
                f"function name {name!r} cannot be printed; use letters, digits, '_', '.' or '$'"
            )
        if any(f.name == name for f in self._module.functions):
            raise VerifyError(f"function @{name} is defined twice")
        fb = FunctionBuilder(self, name, list(params), None if results is None else list(results))
        self._open = fb
        return fb

    def add_function(self, fn: Function) -> Function:
        """Append a function built elsewhere (a loop body traced by the frontend).

        Raises:
            VerifyError: a function of that name exists, or one is still open.
        """
        if self._open is not None:
            raise VerifyError(f"function @{self._open.function.name} is still open; call finish()")
        if any(f.name == fn.name for f in self._module.functions):
            raise VerifyError(f"function @{fn.name} is defined twice")
        self._module.functions.append(fn)
        return fn

    def _close(self, fb: FunctionBuilder) -> None:
        self._module.functions.append(fb.function)
        self._open = None

    def finish(self) -> Module:
        """Verify and return the module."""
        if self._open is not None:
            raise VerifyError(f"function @{self._open.function.name} is still open; call finish()")
        self._module.verify()
        return self._module


class FunctionBuilder:
    """Append ops to one function. Obtain with :meth:`Builder.begin_function`.

    Attributes:
        watch: called with the number of ops emitted so far after every ``watch_every``-th
            op (None: nobody watches); the frontend's trace budget
            (:mod:`accy.frontend.trace_budget`) warns or raises from it.
    """

    watch_every = 1024

    def __init__(
        self, owner: Builder, name: str, params: list[TensorType], results: list[TensorType] | None
    ) -> None:
        self._owner = owner
        self._declared = results
        self.function = Function(name, params, results or [])
        self._done = False
        self._emitted = 0
        self.watch: Callable[[int], None] | None = None

    # ---------------------------------------------------------------- basics
    def param(self, i: int) -> Value:
        """The ``i``-th parameter value."""
        if not 0 <= i < len(self.function.params):
            raise VerifyError(
                f"@{self.function.name}: param index {i} out of range "
                f"({len(self.function.params)} params)"
            )
        return self.function.params[i]

    def emit(
        self, name: str, operands: Sequence[Value], attrs: dict[str, Any] | None = None
    ) -> list[Value]:
        """Append op ``name`` (type-inferred) and return its results."""
        if self._done:
            raise VerifyError(f"@{self.function.name} is finished; no more ops can be added")
        attrs = dict(attrs or {})
        loc = user_location()
        for i, v in enumerate(operands):
            if not isinstance(v, Value):
                raise VerifyError(f"'{name}' op: operand #{i} is not an IR value: {v!r}", op=name)
        try:
            types = get_op_def(name).infer_types([v.type for v in operands], attrs)
        except VerifyError as e:
            where = f" (at {loc})" if loc else ""
            raise VerifyError(f"{e.message}{where}", op=name, position=loc) from None
        op = Operation(name, operands, types, attrs, location=loc)
        self.function.body.append(op)
        self._emitted += 1
        if self.watch is not None and not self._emitted % self.watch_every:
            self.watch(self._emitted)
        return op.results

    def _one(self, name: str, operands: Sequence[Value], **attrs: Any) -> Value:
        return self.emit(name, operands, attrs)[0]

    def _value(self, x: Operand, like: Value | None, op: str | None = None) -> Value:
        if isinstance(x, Value):
            return x
        if isinstance(x, (bool, int, float, np.generic)):
            dtype = like.type.dtype if like is not None else DType.F32
            return self.constant(TensorType(dtype, ()), _scalar(x, dtype, op))
        raise VerifyError(f"expected an IR value or a Python scalar, got {type(x).__name__}")

    def _pair(self, op: str, a: Operand, b: Operand) -> tuple[Value, Value]:
        like = a if isinstance(a, Value) else b if isinstance(b, Value) else None
        va, vb = self._value(a, like, op), self._value(b, like, op)
        shape = _located(broadcast_shapes, op, va.type.shape, vb.type.shape)
        return self.broadcast_to(va, shape), self.broadcast_to(vb, shape)

    def _binary(self, op: str, a: Operand, b: Operand) -> Value:
        va, vb = self._pair(op, a, b)
        return self._one(op, [va, vb])

    # ---------------------------------------------------------------- tensor
    def constant(self, type: TensorType | None, value: Any) -> Value:
        """A literal tensor; ``value`` is converted to ``type`` (dtype and shape)."""
        arr = np.asarray(value)
        if type is not None:
            try:
                arr = np.broadcast_to(arr.astype(type.dtype.numpy), type.shape)
            except ValueError:
                raise VerifyError(
                    f"'tensor.constant' op: value of shape {list(arr.shape)} does not fit {type}",
                    op="tensor.constant",
                ) from None
        arr = np.array(arr, copy=True, order="C")
        return self._one("tensor.constant", [], value=arr)

    def broadcast_to(self, x: Value, shape: Sequence[int]) -> Value:
        if tuple(shape) == x.type.shape:
            return x
        return self._one("tensor.broadcast_to", [x], shape=tuple(shape))

    def reshape(self, x: Value, shape: Sequence[int]) -> Value:
        return self._one("tensor.reshape", [x], shape=tuple(shape))

    def transpose(self, x: Value, perm: Sequence[int]) -> Value:
        return self._one("tensor.transpose", [x], perm=tuple(perm))

    def slice(self, x: Value, start: Sequence[int], limit: Sequence[int]) -> Value:
        """Elements ``start[d] <= i < limit[d]`` of each axis of ``x`` (``tensor.slice``)."""
        return self._one("tensor.slice", [x], start=tuple(start), limit=tuple(limit))

    def pad(self, x: Value, low: Sequence[int], high: Sequence[int], value: float = 0.0) -> Value:
        """``x`` with ``low``/``high`` elements of ``value`` around each axis (``tensor.pad``)."""
        return self._one("tensor.pad", [x], low=tuple(low), high=tuple(high), value=float(value))

    def iota(self, type: TensorType, dim: int = 0) -> Value:
        return self._one("tensor.iota", [], shape=type.shape, dim=dim, dtype=type.dtype)

    def cast(self, x: Value, dtype: str | DType) -> Value:
        return self._one("arith.cast", [x], dtype=DType.parse(dtype))

    def select(self, cond: Value, a: Operand, b: Operand) -> Value:
        va, vb = self._pair("arith.select", a, b)
        shape = _located(broadcast_shapes, "arith.select", cond.type.shape, va.type.shape)
        c = self.broadcast_to(cond, shape)
        return self._one(
            "arith.select", [c, self.broadcast_to(va, shape), self.broadcast_to(vb, shape)]
        )

    # ---------------------------------------------------------------- reductions
    def _reduce(
        self, kind: str, x: Value, axes: Sequence[int] | int | None, keepdims: bool
    ) -> Value:
        if axes is None:
            axes = tuple(range(x.type.rank))
        elif isinstance(axes, int):
            axes = (axes,)
        return self._one(f"reduce.{kind}", [x], axes=tuple(axes), keepdims=bool(keepdims))

    def reduce_sum(self, x: Value, axes=None, keepdims: bool = False) -> Value:
        """Sum over ``axes`` (default: all)."""
        return self._reduce("sum", x, axes, keepdims)

    def reduce_max(self, x: Value, axes=None, keepdims: bool = False) -> Value:
        return self._reduce("max", x, axes, keepdims)

    def reduce_min(self, x: Value, axes=None, keepdims: bool = False) -> Value:
        return self._reduce("min", x, axes, keepdims)

    def reduce_mean(self, x: Value, axes=None, keepdims: bool = False) -> Value:
        return self._reduce("mean", x, axes, keepdims)

    # ---------------------------------------------------------------- linalg / nn
    def dot_general(
        self,
        lhs: Value,
        rhs: Value,
        lhs_contracting: Sequence[int] = (),
        rhs_contracting: Sequence[int] = (),
        lhs_batch: Sequence[int] = (),
        rhs_batch: Sequence[int] = (),
    ) -> Value:
        """XLA DotGeneral; result = batch dims, lhs free dims, rhs free dims."""
        return self._one(
            "linalg.dot_general",
            [lhs, rhs],
            lhs_contracting=tuple(lhs_contracting),
            rhs_contracting=tuple(rhs_contracting),
            lhs_batch=tuple(lhs_batch),
            rhs_batch=tuple(rhs_batch),
        )

    def matmul(self, lhs: Value, rhs: Value) -> Value:
        """``lhs @ rhs`` for rank-2 operands (or batched rank-3 with equal batch)."""
        r = lhs.type.rank
        if r == 3:
            return self.dot_general(lhs, rhs, [2], [1], [0], [0])
        return self.dot_general(lhs, rhs, [r - 1], [0])

    def einsum(self, operands: Sequence[Value], out_type: TensorType | None, spec: str) -> Value:
        """numpy einsum; ``out_type`` (optional) is checked against the inferred type."""
        v = self._one("linalg.einsum", list(operands), spec=spec)
        if out_type is not None and out_type != v.type:
            raise VerifyError(
                f"'linalg.einsum' op: spec {spec!r} gives {v.type}, declared {out_type}",
                op="linalg.einsum",
            )
        return v

    def softmax(self, x: Value, axis: int = -1) -> Value:
        return self._one("nn.softmax", [x], axis=axis)

    def relu(self, x: Value) -> Value:
        return self._one("nn.relu", [x])

    def gelu(self, x: Value) -> Value:
        return self._one("nn.gelu", [x])

    # ---------------------------------------------------------------- kernel-library ops
    def gather(self, src: Value, indices: Value, axis: int = 0, mode: str = "raise") -> Value:
        """``numpy.take(src, indices, axis, mode)`` (``tensor.gather``; see
        :mod:`accy.ir.ops.library`)."""
        return self._one(
            "tensor.gather",
            [src, indices],
            axis=_int_attr("tensor.gather", "axis", axis),
            mode=mode,
        )

    def _updates(self, op: str, dst: Value, indices: Value, values: Operand, axis: int) -> Value:
        rank = dst.type.rank
        axis = _int_attr(op, "axis", axis)
        ax = axis + rank if axis < 0 else axis
        shape = (
            dst.type.shape[:ax] + indices.type.shape + dst.type.shape[ax + 1 :]
            if 0 <= ax < rank
            else dst.type.shape
        )
        v = self._value(values, dst, op)
        return self.broadcast_to(v, shape) if v.type.rank <= len(shape) else v

    def scatter(
        self, dst: Value, indices: Value, values: Operand, axis: int = 0, mode: str = "raise"
    ) -> Value:
        """Copy of ``dst`` with ``values`` (broadcast) written at ``indices`` along ``axis``;
        duplicates: the last position wins (``tensor.scatter``)."""
        v = self._updates("tensor.scatter", dst, indices, values, axis)
        return self._one(
            "tensor.scatter",
            [dst, indices, v],
            axis=_int_attr("tensor.scatter", "axis", axis),
            mode=mode,
        )

    def scatter_add(self, dst: Value, indices: Value, values: Operand, axis: int = 0) -> Value:
        """``numpy.add.at`` on a copy of ``dst`` (``tensor.scatter_add``; values broadcast)."""
        v = self._updates("tensor.scatter_add", dst, indices, values, axis)
        return self._one(
            "tensor.scatter_add",
            [dst, indices, v],
            axis=_int_attr("tensor.scatter_add", "axis", axis),
        )

    def sort(self, x: Value, axis: int = -1, descending: bool = False) -> Value:
        """Stable sort along ``axis`` (default the last; ``tensor.sort``)."""
        return self._one(
            "tensor.sort",
            [x],
            axis=_int_attr("tensor.sort", "axis", axis),
            descending=bool(descending),
        )

    def argsort(self, x: Value, axis: int = -1, descending: bool = False) -> Value:
        """Stable sorting permutation (i32) along ``axis`` (``tensor.argsort``)."""
        return self._one(
            "tensor.argsort",
            [x],
            axis=_int_attr("tensor.argsort", "axis", axis),
            descending=bool(descending),
        )

    def random_uniform(
        self,
        shape: TensorType | Sequence[int],
        seed: int = 0,
        dtype: str | DType = "f32",
        offset: int = 0,
        low: float = 0.0,
        high: float = 1.0,
        algorithm: str = "philox4x32-10",
    ) -> Value:
        """Uniform floats in ``[low, high)`` from the counter stream ``(seed, offset)``
        (``tensor.random_uniform``); ``shape`` may be a tensor type (its dtype wins)."""
        if isinstance(shape, TensorType):
            shape, dtype = shape.shape, shape.dtype
        op = "tensor.random_uniform"
        if isinstance(shape, (int, np.integer)) and not isinstance(shape, (bool, np.bool_)):
            shape = (shape,)
        if isinstance(shape, (str, bytes)) or not isinstance(shape, Sequence | np.ndarray):
            raise VerifyError(f"'{op}' op: shape must be a sequence of ints, got {shape!r}", op=op)
        return self._one(
            "tensor.random_uniform",
            [],
            shape=tuple(_int_attr(op, "shape extent", s) for s in shape),
            dtype=DType.parse(dtype),
            seed=_int_attr(op, "seed", seed),
            offset=_int_attr(op, "offset", offset),
            low=float(low),
            high=float(high),
            algorithm=algorithm,
        )

    def segment_sum(self, values: Value, segment_ids: Value, num_segments: int) -> Value:
        """Rows of ``values`` summed by ``segment_ids`` (``tensor.segment_sum``)."""
        return self._one(
            "tensor.segment_sum",
            [values, segment_ids],
            num_segments=_int_attr("tensor.segment_sum", "num_segments", num_segments),
        )

    # ---------------------------------------------------------------- finishing
    def return_(self, *values: Value) -> None:
        """End the function with ``func.return``; checks declared result types."""
        if self._declared is not None:
            got = [v.type for v in values]
            if got != self._declared:
                raise VerifyError(
                    f"@{self.function.name}: return types {[str(t) for t in got]} do not match "
                    f"declared results {[str(t) for t in self._declared]}"
                )
        self.function.result_types = [v.type for v in values]
        self.emit("func.return", list(values))
        self._done = True

    def finish(self) -> Function:
        """Close the function (it must have returned)."""
        if not self._done:
            raise VerifyError(f"@{self.function.name}: call return_() before finish()")
        self._owner._close(self)
        return self.function


def _install_elementwise() -> None:
    for name in ("add", "sub", "mul", "div", "rem", "max", "min", "pow", "and", "or", "xor"):

        def binary(self, a: Operand, b: Operand, _n=f"arith.{name}") -> Value:
            return self._binary(_n, a, b)

        binary.__doc__ = f"Elementwise ``{name}`` with numpy broadcasting."
        setattr(FunctionBuilder, name if name not in ("and", "or") else f"{name}_", binary)
    for name in ("eq", "ne", "lt", "le", "gt", "ge"):

        def compare(self, a: Operand, b: Operand, _n=f"arith.{name}") -> Value:
            return self._binary(_n, a, b)

        compare.__doc__ = f"Elementwise ``{name}`` comparison; result dtype bool."
        setattr(FunctionBuilder, name, compare)
    unary = {"neg": "arith.neg", "abs": "arith.abs", "not_": "arith.not"}
    unary.update(
        {n: f"math.{n}" for n in ("exp", "log", "sqrt", "rsqrt", "tanh", "sin", "cos", "sigmoid")}
    )
    for meth, opname in unary.items():

        def un(self, x: Value, _n=opname) -> Value:
            return self._one(_n, [x])

        un.__doc__ = f"Elementwise ``{opname}``."
        setattr(FunctionBuilder, meth, un)


_install_elementwise()
