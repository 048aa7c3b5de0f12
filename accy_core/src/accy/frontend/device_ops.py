"""Array operators on device arrays, CuPy style: each runs as a jitted op on the array's backend.

``d + 1``, ``d * e``, ``d @ w``, ``d < 0``, ``-d``, ``abs(d)``, ``d.T``, ``d[1:, ::2]``,
``d[idx]``, ``d.sum(axis=0)``, ``d.mean()``, ``d.reshape(2, -1)``, ``d.astype(np.int32)``
and numpy ufuncs (``np.exp(d)``, ``host + d``) return new :class:`DeviceArray` objects on
the same backend: each is an :func:`accy.jit` function of one operator, traced and
compiled once per signature (dtypes and shapes of the operands, the value of static things
such as an index or an axis) and cached for the process. Semantics are those of
:mod:`accy.numpy` inside a jitted function: Python scalars are weak (``d_f32 * 2`` stays
f32), dtypes promote by accy's table, integer ``/`` gives f32.

A Python scalar operand is passed as a 0-d array of the array's dtype when that is what the
weak-typing rule gives anyway (float with a float array, int with an int array in range),
so ``d + i`` in a loop compiles once, not once per value of ``i``.

Not supported, each with an :class:`~accy.errors.UnsupportedError`: item assignment
(device arrays are immutable), and operands on two different backends. ufunc calls with
options (``out=``, ``where=``) and ufunc methods (``np.add.reduce``) compute on the host
and return numpy arrays, as before.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

import numpy as np

from accy.errors import InputError, UnsupportedError
from accy.frontend.device_array import DeviceArray

__all__ = ["install"]

_JITS: dict[tuple[str, str], Any] = {}


def _jitted(name: str, backend: str, fn: Callable[..., Any], static: tuple[int, ...] = ()):
    key = (name, backend)
    j = _JITS.get(key)
    if j is None:
        from accy.frontend.jit import Jitted

        # first one in wins: threads meeting a new op at once share one jitted function
        j = _JITS.setdefault(key, Jitted(fn, backend=backend, static_argnums=static,
                                         name=f"device_{name}"))
    return j


def _operand(d: DeviceArray, other: Any) -> Any:
    """``other`` as an operand next to ``d``: a 0-d array for a weak scalar where exact."""
    if isinstance(other, DeviceArray):
        if other.backend_name != d.backend_name:
            raise UnsupportedError(
                f"operands on two backends ({d!r} and {other!r}); move one with "
                f"accy.asarray(x, backend={d.backend_name!r})", feature="cross-backend operands",
                alternative="accy.asarray")
        return other
    if isinstance(other, (bool, np.bool_)):
        return bool(other)
    kind = d.dtype.kind
    if isinstance(other, (int, np.integer)) and kind in "iu":
        info = np.iinfo(d.dtype)
        if info.min <= int(other) <= info.max:
            return np.asarray(other, dtype=d.dtype)
        return int(other)
    if isinstance(other, (int, float, np.integer, np.floating)) and kind == "f":
        return np.asarray(other, dtype=d.dtype)
    if isinstance(other, (int, float)):
        return other  # a weak scalar whose dtype the tracer decides (static: one per value)
    return np.asarray(other)


def _binary(name: str, op: Callable[[Any, Any], Any], reverse: bool = False):
    key = f"r{name}" if reverse else name
    fn = (lambda a, b: op(b, a)) if reverse else (lambda a, b: op(a, b))  # noqa: E731

    def method(self: DeviceArray, other: Any) -> Any:
        if not isinstance(other, (DeviceArray, np.ndarray, np.generic, int, float, bool, list,
                                  tuple)):
            return NotImplemented
        if other is self:  # d - d: one parameter (backends may refuse one buffer bound twice)
            return _jitted(f"{key}_self", self.backend_name, lambda a: op(a, a))(self)
        return _jitted(key, self.backend_name, fn)(self, _operand(self, other))

    method.__name__ = f"__{key}__"
    return method


_BINARY = {"add": operator.add, "sub": operator.sub, "mul": operator.mul,
           "truediv": operator.truediv, "pow": operator.pow, "matmul": operator.matmul,
           "and": operator.and_, "or": operator.or_, "xor": operator.xor,
           "floordiv": operator.floordiv, "mod": operator.mod}
_COMPARE = {"eq": operator.eq, "ne": operator.ne, "lt": operator.lt, "le": operator.le,
            "gt": operator.gt, "ge": operator.ge}
_UNARY = {"neg": operator.neg, "abs": operator.abs, "invert": operator.invert}


def _unary(name: str, op: Callable[[Any], Any]):
    def method(self: DeviceArray) -> Any:
        return _jitted(name, self.backend_name, lambda a: op(a))(self)  # noqa: PLW0108

    method.__name__ = f"__{name}__"
    return method


def _anp(name: str) -> Callable[..., Any]:
    from accy import numpy as anp

    return getattr(anp, name)


def _reduction(name: str):
    def method(self: DeviceArray, axis: Any = None, keepdims: bool = False, **options: Any
               ) -> Any:
        # options: numpy's ddof (var/std) and dtype (sum/mean), static like axis.
        # np.sum(d) / np.mean(d) / np.max(d) call this method with out=None (and dtype=None)
        if options.pop("out", None) is not None:
            raise UnsupportedError(f"{name}(out=...) of a device array: device arrays are "
                                   "immutable; use the returned array",
                                   feature="out=", alternative=f"r = d.{name}(...)")
        if options.get("dtype", 0) is None:
            del options["dtype"]
        axis = tuple(axis) if isinstance(axis, list) else axis
        fn = _jitted(name, self.backend_name,
                     lambda a, ax, kd, op: _anp(name)(a, axis=ax, keepdims=kd, **dict(op)),
                     static=(1, 2, 3))
        return fn(self, axis, bool(keepdims), tuple(sorted(options.items())))

    method.__name__ = name
    method.__doc__ = (f"``accy.numpy.{name}(self, axis, keepdims)`` on the device "
                      "(a new device array).")
    return method


# ------------------------------------------------------------------ indexing
def _index_key(index: Any, arrays: list[Any]) -> Any:
    """A hashable description of ``index``; array indices go to ``arrays`` (traced)."""
    items = index if isinstance(index, tuple) else (index,)
    key = []
    for ix in items:
        if isinstance(ix, slice):
            key.append(("slice", ix.start, ix.stop, ix.step))
        elif ix is None or ix is Ellipsis:
            key.append(("none",) if ix is None else ("ellipsis",))
        elif isinstance(ix, (bool, np.bool_)):
            raise UnsupportedError("indexing a device array with a bool is not supported; "
                                   "use anp.where", feature="indexing: bool")
        elif isinstance(ix, (int, np.integer)):
            key.append(("int", int(ix)))
        elif isinstance(ix, (DeviceArray, np.ndarray, list)):
            arrays.append(ix if isinstance(ix, DeviceArray) else np.asarray(ix))
            key.append(("array", len(arrays) - 1))
        else:
            raise InputError(f"cannot index a device array with {type(ix).__name__}; use "
                             "integers, slices, None, ... or one integer array")
    return tuple(key)


def _rebuild(key: Any, arrays: tuple[Any, ...]) -> tuple[Any, ...]:
    out: list[Any] = []
    for item in key:
        tag = item[0]
        if tag == "slice":
            out.append(slice(*item[1:]))
        elif tag == "none":
            out.append(None)
        elif tag == "ellipsis":
            out.append(Ellipsis)
        elif tag == "int":
            out.append(item[1])
        else:
            out.append(arrays[item[1]])
    return tuple(out)


def _getitem(self: DeviceArray, index: Any) -> Any:
    arrays: list[Any] = []
    key = _index_key(index, arrays)
    fn = _jitted("getitem", self.backend_name,
                 lambda a, k, *ix: a[_rebuild(k, ix)], static=(1,))
    return fn(self, key, *arrays)


def _setitem(self: DeviceArray, index: Any, value: Any) -> None:
    raise UnsupportedError(
        f"{self!r} is immutable: item assignment is not supported; build a new array "
        "(anp.where(mask, value, x), or x.at[idx].add(v) inside an accy.jit function)",
        feature="device array item assignment", alternative="anp.where")


# ------------------------------------------------------------------ numpy protocol
def _array_ufunc(self: DeviceArray, ufunc: np.ufunc, method: str, *inputs: Any,
                 **kwargs: Any) -> Any:
    from accy import numpy as anp

    name = ufunc.__name__
    if method == "__call__" and not kwargs and name in anp.__all__:
        first = next(x for x in inputs if isinstance(x, DeviceArray))
        args = [x if isinstance(x, DeviceArray) else _operand(first, x) for x in inputs]
        fn = _jitted(f"ufunc_{name}", first.backend_name, lambda *a: getattr(anp, name)(*a))
        return fn(*args)
    host = [np.asarray(x) if isinstance(x, DeviceArray) else x for x in inputs]
    return getattr(ufunc, method)(*host, **kwargs)


def _T(self: DeviceArray) -> Any:  # noqa: N802 - numpy's name
    """The transpose (axes reversed), a new device array."""
    return self.transpose()


def _transpose(self: DeviceArray, *axes: Any) -> Any:
    """``accy.numpy.transpose`` on the device (a new device array)."""
    perm = axes[0] if len(axes) == 1 else (axes or None)
    perm = tuple(perm) if perm is not None else None
    fn = _jitted("transpose", self.backend_name, lambda a, p: _anp("transpose")(a, p),
                 static=(1,))
    return fn(self, perm)


def _reshape(self: DeviceArray, *shape: Any) -> Any:
    """``accy.numpy.reshape`` on the device (a new device array; ``-1`` allowed)."""
    target = shape[0] if len(shape) == 1 else shape
    target = tuple(target) if isinstance(target, (list, tuple)) else (int(target),)
    fn = _jitted("reshape", self.backend_name, lambda a, s: _anp("reshape")(a, s), static=(1,))
    return fn(self, target)


def _astype(self: DeviceArray, dtype: Any) -> Any:
    """A copy converted to ``dtype`` on the device (float → int truncates toward zero)."""
    name = np.dtype(dtype).name
    fn = _jitted("astype", self.backend_name, lambda a, t: a.astype(t), static=(1,))
    return fn(self, name)


def _scalar(convert: Callable[[Any], Any], what: str):
    def method(self: DeviceArray) -> Any:
        if self.size != 1:
            raise InputError(f"{what} of {self!r} needs exactly one element, it has "
                             f"{self.size}; reduce it first (.sum(), .max()) or index it")
        return convert(self.numpy().reshape(()))

    method.__name__ = f"__{what.strip('()')}__"
    return method


def install() -> None:
    """Add the operators and methods to :class:`DeviceArray` (idempotent)."""
    cls = DeviceArray
    for name, op in _BINARY.items():
        setattr(cls, f"__{name}__", _binary(name, op))
        setattr(cls, f"__r{name}__", _binary(name, op, reverse=True))
    for name, op in _COMPARE.items():
        setattr(cls, f"__{name}__", _binary(name, op))
    for name, op in _UNARY.items():
        setattr(cls, f"__{name}__", _unary(name, op))
    cls.__pos__ = lambda self: self  # type: ignore[attr-defined]
    cls.__hash__ = None  # type: ignore[assignment]  # == is elementwise
    for name in ("sum", "mean", "max", "min", "var", "std"):
        setattr(cls, name, _reduction(name))
    cls.__getitem__ = _getitem  # type: ignore[attr-defined]
    cls.__iter__ = lambda self: (self[i] for i in range(len(self)))  # type: ignore
    cls.__setitem__ = _setitem  # type: ignore[attr-defined]
    cls.__array_ufunc__ = _array_ufunc  # type: ignore[attr-defined]
    cls.T = property(_T)  # type: ignore[attr-defined]
    cls.transpose = _transpose  # type: ignore[attr-defined]
    cls.reshape = _reshape  # type: ignore[attr-defined]
    cls.astype = _astype  # type: ignore[attr-defined]
    cls.__bool__ = _scalar(bool, "bool()")  # type: ignore[attr-defined]
    cls.__float__ = _scalar(float, "float()")  # type: ignore[attr-defined]
    cls.__int__ = _scalar(int, "int()")  # type: ignore[attr-defined]
