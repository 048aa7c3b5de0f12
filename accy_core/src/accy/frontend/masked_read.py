"""``x[traced_mask]`` read only to be written back: ``x[m] += v``, ``x[m] = x[m] * 2 + 1``.

numpy's ``x[m] += v`` is ``t = x[m]; t = t + v; x[m] = t``: the read has a data-dependent
shape (the count of True elements), which a traced program cannot have. The read therefore
returns a :class:`MaskedRead`, a pending value that stands for "the selected elements of
``full``", where ``full`` has the shape of ``x`` and is computed elementwise over all of
``x``. Elementwise arithmetic with operands that broadcast to ``x.shape[mask.ndim:]`` (or
with another read under the same mask) stays pending; writing it back under the same mask
(:func:`accy.frontend.setitem.setitem`) becomes ``select(mask, full, x)``. A mask traced
twice alike (``x[x > 0.5] = -x[x > 0.5]``) is the same mask
(:mod:`accy.frontend.same_value`). Every other use (a reduction, a method, writing under
another mask) raises the
:class:`~accy.errors.UnsupportedError` of a data-dependent shape, naming the user's line.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from accy.errors import UnsupportedError
from accy.frontend.numpy_api import binary_op, broadcast_shape, negative, shape_of, wrap
from accy.frontend.same_value import same_value
from accy.frontend.trace import user_location
from accy.frontend.tracer import Tracer

__all__ = ["MaskedRead", "masked_read", "masked_refusal"]

_OPS = {"add": "+", "subtract": "-", "multiply": "*", "divide": "/", "power": "**",
        "floor_divide": "//", "remainder": "%", "bitwise_and": "&", "bitwise_or": "|",
        "bitwise_xor": "^", "maximum": "max", "minimum": "min"}
_DUNDER = {"add": "add", "sub": "subtract", "mul": "multiply", "truediv": "divide",
           "pow": "power", "floordiv": "floor_divide", "mod": "remainder",
           "and": "bitwise_and", "or": "bitwise_or", "xor": "bitwise_xor"}


def masked_refusal(what: str = "indexing with a traced boolean mask") -> UnsupportedError:
    """The error for a use of ``x[traced_mask]`` other than an elementwise write-back."""
    fix = ("x[m] with a traced boolean mask has a shape that depends on data; use "
           "anp.where(mask, x, 0) instead, or write it back: x[mask] += v and "
           "x[mask] = x[mask] * 2 + 1 are supported")
    return UnsupportedError(f"{what} at {user_location()} is not supported; {fix}",
                            feature="indexing: a boolean mask", alternative=fix)


class MaskedRead:
    """The pending value of ``x[mask]`` for a traced boolean ``mask`` over ``x``'s leading axes.

    Attributes:
        mask: the traced mask (shape ``x.shape[:mask.ndim]``).
        full: a traced array of ``x``'s shape whose selected elements are the value.
        inplace_dtype: the dtype an in-place operator (``+=``) must keep (``x``'s).
    """

    __slots__ = ("mask", "full", "inplace_dtype")

    def __init__(self, mask: Tracer, full: Tracer, inplace_dtype: Any = None) -> None:
        self.mask, self.full = mask, full
        self.inplace_dtype = inplace_dtype or full.accy_dtype

    @property
    def rest(self) -> tuple[int, ...]:
        """The axes after the mask's: the shape of one selected element."""
        return self.full.shape[self.mask.ndim:]

    def _operand(self, other: Any) -> Any:
        """``other`` broadcast against ``full`` as numpy broadcasts it against ``x[mask]``."""
        if isinstance(other, MaskedRead):
            if other.mask is not self.mask and not same_value(other.mask.value,
                                                              self.mask.value):
                raise masked_refusal("combining reads under two different traced masks")
            return other.full
        shape = tuple(shape_of(other))
        while len(shape) > len(self.rest) and shape[0] == 1:
            shape = shape[1:]
        if len(shape) > len(self.rest):
            raise masked_refusal(f"an operand of shape {list(shape_of(other))} combined with "
                                 "x[traced_mask]")
        broadcast_shape("x[mask] op v", shape, self.rest)
        if isinstance(other, Tracer):
            lead = (1,) * (self.full.ndim - len(shape))
            return wrap(other.trace, other.trace.fb.reshape(other.value, lead + shape))
        if shape:
            return np.reshape(np.asarray(other), (1,) * (self.full.ndim - len(shape)) + shape)
        return other

    def _combine(self, name: str, other: Any, reverse: bool = False) -> MaskedRead:
        o = self._operand(other)
        a, b = (o, self.full) if reverse else (self.full, o)
        out = binary_op(name, _OPS[name], a, b)
        if out.shape != self.full.shape:
            raise masked_refusal(f"an operand of shape {list(shape_of(other))} combined with "
                                 "x[traced_mask]")
        return MaskedRead(self.mask, out, self.inplace_dtype)

    def _inplace(self, name: str, other: Any) -> MaskedRead:
        res = self._combine(name, other)
        if res.full.accy_dtype.is_float and not self.inplace_dtype.is_float:
            raise UnsupportedError(
                f"'{_OPS[name]}=' at {user_location()} would store a {res.full.accy_dtype} "
                f"result into a {self.inplace_dtype} array (numpy refuses this cast too); "
                "write x[mask] = x[mask] op y", feature=f"in-place {_OPS[name]}")
        return res

    def __neg__(self) -> MaskedRead:
        return MaskedRead(self.mask, negative(self.full), self.inplace_dtype)

    def __pos__(self) -> MaskedRead:
        return self

    def __getattr__(self, name: str) -> Any:
        raise masked_refusal(f"x[traced_mask].{name}")

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        raise masked_refusal("x[traced_mask] used as an array")

    def __array_ufunc__(self, ufunc: Any, method: str, *inputs: Any, **kwargs: Any) -> Any:
        raise masked_refusal(f"numpy.{ufunc.__name__} of x[traced_mask]")

    def __array_function__(self, func: Any, types: Any, args: Any, kwargs: Any) -> Any:
        raise masked_refusal(f"numpy.{func.__name__} of x[traced_mask]")

    def __bool__(self) -> bool:
        raise masked_refusal("bool() of x[traced_mask]")

    def __iter__(self):
        raise masked_refusal("iteration over x[traced_mask]")

    def __len__(self) -> int:
        raise masked_refusal("len() of x[traced_mask]")

    def __getitem__(self, index: Any) -> Any:
        raise masked_refusal("indexing x[traced_mask]")


def _install() -> None:
    for dunder, name in _DUNDER.items():
        setattr(MaskedRead, f"__{dunder}__", lambda s, o, _n=name: s._combine(_n, o))
        setattr(MaskedRead, f"__r{dunder}__", lambda s, o, _n=name: s._combine(_n, o, True))
        setattr(MaskedRead, f"__i{dunder}__", lambda s, o, _n=name: s._inplace(_n, o))


_install()


def masked_read(x: Tracer, mask: Tracer) -> MaskedRead:
    """``x[mask]`` for a traced boolean ``mask`` (see the module docstring)."""
    return MaskedRead(mask, wrap(x.trace, x.value), x.accy_dtype)
