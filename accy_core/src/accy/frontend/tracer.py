"""The traced array: what a jitted function's arguments are while it is being traced.

A :class:`Tracer` stands for a tensor IR value of a known dtype and shape; it has no data.
This module is the core: metadata, in-place rebinding and the refusals of concretization.
Operators, indexing, ``x[idx] = v``, ``.at[...]``, the numpy protocol and the ndarray
methods (``.sum()``, ``.reshape()``, ``.argmax()``, ...) are installed on the class by
:mod:`accy.frontend.methods`, above the op groups, so imports flow one way: tracer core →
op groups → methods → the :mod:`accy.numpy` namespace. Anything that
needs the data (``bool(x)``, ``if x > 0:``, ``int(x)``, ``np.asarray(x)``) raises
:class:`~accy.frontend.errors.TracerConversionError` naming the user's line.

numpy interoperates: ``np.exp(t)``, ``host_array + t`` and ``np.sum(t, axis=0)`` dispatch to
:mod:`accy.numpy` through ``__array_ufunc__`` / ``__array_function__``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

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
        from its base first, so it is never stale (numpy's view semantics). Inside a loop
        body traced from this array's function, an outer array is captured as a body
        parameter (a loop invariant)."""
        if self._view is not None:
            self._view.refresh(self)
        from accy.frontend.trace import current_trace

        cur = current_trace()
        if cur is None or cur is self.trace:
            return self._value
        return cur.capture(self.trace, self._value)

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
        where = user_location()
        return TracerConversionError(
            control_flow_message(what, str(self._value.type), where), feature=what,
            array=str(self._value.type), where=where or "")

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
