"""The traced array: what a jitted function's arguments are while it is being traced.

A :class:`Tracer` stands for a tensor IR value of a known dtype and shape; it has no data.
Arithmetic, comparisons, ``@``, ``.T``, ``.astype``, ``.reshape``, reductions, indexing and
``.at[idx].add(v)`` append ops to the current trace through :mod:`accy.numpy`. Anything that
needs the data (``bool(x)``, ``if x > 0:``, ``int(x)``, ``np.asarray(x)``) raises
:class:`~accy.frontend.errors.TracerConversionError` naming the user's line.

numpy interoperates: ``np.exp(t)``, ``host_array + t`` and ``np.sum(t, axis=0)`` dispatch to
:mod:`accy.numpy` through ``__array_ufunc__`` / ``__array_function__``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from accy.errors import UnsupportedError
from accy.frontend.errors import TracerConversionError, control_flow_message
from accy.frontend.trace import Trace, user_location
from accy.ir import DType, Value

__all__ = ["Tracer"]


class Tracer:
    """A traced array: a tensor IR value inside the function being traced.

    Attributes:
        value: the IR value (dtype and static shape in ``value.type``).
        trace: the trace it belongs to.
    """

    __slots__ = ("_value", "trace", "_version", "_view", "__weakref__")
    __array_priority__ = 1000  # numpy defers binary operators to us

    def __init__(self, value: Value, trace: Trace) -> None:
        self._value = value
        self.trace = trace
        self._version = 0  # bumped by every in-place write (x[idx] = v, x += y)
        self._view: Any = None  # a ViewOf when made by basic indexing or a reshape

    @property
    def value(self) -> Value:
        """The IR value; a view of an array written since it was taken is re-derived
        from its base first, so it is never stale (numpy's view semantics)."""
        if self._view is not None:
            self._view.refresh(self)
        return self._value

    def _rebind(self, value: Value) -> None:
        """Make this array stand for ``value`` from now on (an in-place write)."""
        self._value = value
        self._version += 1

    # ------------------------------------------------------------ metadata
    @property
    def shape(self) -> tuple[int, ...]:
        """Extent of each axis in elements."""
        return self._value.type.shape

    @property
    def dtype(self) -> np.dtype:
        """The numpy dtype of the elements (``np.float32`` for ``f32``)."""
        return self._value.type.dtype.numpy

    @property
    def accy_dtype(self) -> DType:
        return self._value.type.dtype

    @property
    def ndim(self) -> int:
        return self._value.type.rank

    @property
    def size(self) -> int:
        """Number of elements."""
        return self._value.type.num_elements

    def __repr__(self) -> str:
        return f"Tracer<{self._value.type}>"

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError(f"len() of a 0-d traced array {self._value.type}")
        return self.shape[0]

    # ------------------------------------------------------------ concretization
    def _concrete(self, what: str) -> TracerConversionError:
        return TracerConversionError(
            control_flow_message(what, str(self._value.type), user_location()), feature=what
        )

    def __bool__(self) -> bool:
        raise self._concrete("bool() (a Python if/while/and/or)")

    def __int__(self) -> int:
        raise self._concrete("int()")

    def __float__(self) -> float:
        raise self._concrete("float()")

    def __index__(self) -> int:
        raise self._concrete("use as a Python index")

    def __complex__(self) -> complex:
        raise self._concrete("complex()")

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        raise self._concrete("conversion to a numpy array")

    def __iter__(self):
        if not self.shape:
            raise TypeError(f"iteration over a 0-d traced array {self._value.type}")
        return (self[i] for i in range(self.shape[0]))

    __hash__ = None  # type: ignore[assignment]  # == is elementwise

    # ------------------------------------------------------------ numpy protocol
    def __array_ufunc__(self, ufunc: np.ufunc, method: str, *inputs: Any, **kwargs: Any) -> Any:
        fn = getattr(_ops(), ufunc.__name__, None)
        if method != "__call__" or fn is None or kwargs:
            raise UnsupportedError(
                f"numpy ufunc np.{ufunc.__name__}.{method} on a traced array is not supported "
                f"by accy; use the accy.numpy function of the same name where one exists",
                feature=f"np.{ufunc.__name__}", alternative="accy.numpy",
            )
        return fn(*inputs)

    def __array_function__(self, func: Any, types: Any, args: Any, kwargs: Any) -> Any:
        from accy import numpy as anp

        return getattr(anp, func.__name__)(*args, **kwargs)

    # ------------------------------------------------------------ methods
    @property
    def T(self) -> Tracer:  # noqa: N802 - numpy's name
        """The transpose (axes reversed)."""
        return _api().transpose(self)

    @property
    def at(self) -> Any:
        """Functional updates: ``x.at[idx].add(v)`` returns a new array (scatter-add)."""
        from accy.frontend.setitem import AtIndexer

        return AtIndexer(self)

    def astype(self, dtype: Any) -> Tracer:
        return _api().astype(self, dtype)

    def reshape(self, *shape: Any) -> Tracer:
        return _api().reshape(self, shape[0] if len(shape) == 1 else shape)

    def transpose(self, *axes: Any) -> Tracer:
        return _api().transpose(self, axes[0] if len(axes) == 1 else (axes or None))

    def sum(self, axis: Any = None, keepdims: bool = False) -> Tracer:
        return _api().sum(self, axis=axis, keepdims=keepdims)

    def mean(self, axis: Any = None, keepdims: bool = False) -> Tracer:
        return _api().mean(self, axis=axis, keepdims=keepdims)

    def max(self, axis: Any = None, keepdims: bool = False) -> Tracer:
        return _api().max(self, axis=axis, keepdims=keepdims)

    def min(self, axis: Any = None, keepdims: bool = False) -> Tracer:
        return _api().min(self, axis=axis, keepdims=keepdims)

    def __getitem__(self, index: Any) -> Tracer:
        from accy.frontend.indexing import getitem

        return getitem(self, index)

    def __setitem__(self, index: Any, values: Any) -> None:
        from accy.frontend.setitem import setitem

        setitem(self, index, values)


def _api():
    from accy import numpy as anp

    return anp


def _ops():
    from accy.frontend import numpy_api

    return numpy_api


def _inplace(fname: str, sym: str):
    def iop(self: Tracer, other: Any) -> Tracer:
        res = _ops().binary_op(fname, sym, self, other)
        if res.accy_dtype.is_float and not self.accy_dtype.is_float:
            raise UnsupportedError(
                f"'{sym}=' at {user_location()} would store a {res.accy_dtype} result into "
                f"a {self.accy_dtype} array (numpy refuses this cast too); write "
                f"x = x {sym} y to make a new array", feature=f"in-place {sym}")
        self[...] = res
        return self

    iop.__name__ = f"__i{fname}__"
    return iop


def _install_operators() -> None:
    binary = {
        "add": "+", "sub": "-", "mul": "*", "truediv": "/", "pow": "**", "matmul": "@",
        "and": "&", "or": "|", "xor": "^", "floordiv": "//", "mod": "%",
    }
    funcs = {
        "add": "add", "sub": "subtract", "mul": "multiply", "truediv": "divide", "pow": "power",
        "matmul": "matmul", "and": "bitwise_and", "or": "bitwise_or", "xor": "bitwise_xor",
        "floordiv": "floor_divide", "mod": "remainder",
    }
    for dunder, fname in funcs.items():
        sym = binary[dunder]

        def fwd(self, other, _f=fname, _s=sym):
            return _ops().binary_op(_f, _s, self, other)

        def rev(self, other, _f=fname, _s=sym):
            return _ops().binary_op(_f, _s, other, self)

        setattr(Tracer, f"__{dunder}__", fwd)
        setattr(Tracer, f"__r{dunder}__", rev)
    compares = {"eq": ("equal", "=="), "ne": ("not_equal", "!="), "lt": ("less", "<"),
                "le": ("less_equal", "<="), "gt": ("greater", ">"), "ge": ("greater_equal", ">=")}
    for dunder, (fname, sym) in compares.items():
        def cmp(self, other, _f=fname, _s=sym):
            return _ops().binary_op(_f, _s, self, other)

        setattr(Tracer, f"__{dunder}__", cmp)
    for dunder, fname in funcs.items():
        if dunder != "matmul":
            setattr(Tracer, f"__i{dunder}__", _inplace(fname, binary[dunder]))
    Tracer.__neg__ = lambda self: _api().negative(self)  # type: ignore[method-assign]
    Tracer.__pos__ = lambda self: self  # type: ignore[method-assign]
    Tracer.__abs__ = lambda self: _api().abs(self)  # type: ignore[method-assign]
    Tracer.__invert__ = lambda self: _api().invert(self)  # type: ignore[method-assign]


_install_operators()
