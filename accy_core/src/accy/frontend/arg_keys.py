"""How ``accy.jit`` keys a call by its arguments.

A signature (``Jitted._signature``) keys static values by type and value (:func:`_typed`);
``static_argnums`` values are wrapped in :class:`_Static`, which flattening keeps whole.
The small-call path keys a call without the signature's flattening (:func:`call_key`):
positional arguments that are all plain numpy arrays (not complex: two leaves each) and
Python numbers (``f(a, b, 10)``: static, so part of the signature), by each array's dtype
and shape and each number's type and value (a float's ``repr``). The executable's
small-call function takes the arrays only; :func:`with_statics` wraps it to take the whole
call and refuse a call whose numbers differ.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from accy.runtime.fast_call import no_fast_call

__all__ = ["_Static", "_mark_static", "_typed", "_unmark", "call_key", "with_statics"]

_ndarray = np.ndarray


def _typed(tree: Any) -> Any:
    """``tree`` with every number tagged by its type and every float by its ``repr``: Python
    equality (and so a dict key) makes ``1 == 1.0 == True`` and ``0.0 == -0.0``, inside a
    static tuple or a dict key too, and a trace tells them apart (a result's dtype, the sign
    of a zero)."""
    t = type(tree)
    if t is tuple:
        return tuple(_typed(x) for x in tree)
    if t is float or t is complex:
        return (t.__name__, repr(tree))
    if t is int or t is bool:
        return (t.__name__, tree)
    if t is _Static:
        return ("static", _typed(tree.key))
    return tree


class _Static:
    """Wraps a static argument so that flatten() keeps it whole (hashed by value; a numpy
    array, such as an ``anp.random.key``, by its dtype, shape and bytes)."""

    __slots__ = ("value", "key")

    def __init__(self, value: Any) -> None:
        self.value = value
        self.key = (("ndarray", value.dtype.str, repr(value.dtype), value.shape, value.tobytes())
                    if isinstance(value, np.ndarray) else value)

    def __hash__(self) -> int:
        return hash(("static", self.key))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Static) and other.key == self.key


def _mark_static(args: tuple, static: frozenset[int]) -> tuple:
    return tuple(_Static(a) if i in static else a for i, a in enumerate(args))


def _unmark(args: tuple) -> tuple:
    return tuple(a.value if isinstance(a, _Static) else a for a in args)


def call_key(args: tuple) -> tuple[tuple, tuple] | None:
    """``(key, arrays)`` of a call's positional ``args`` (module docstring): its arrays in
    order (``args`` itself when it has no numbers); ``None`` when some argument is neither
    a plain non-complex numpy array nor an int, float or bool."""
    key, arrays = [], []
    for a in args:
        t = type(a)
        if t is _ndarray:
            if a.dtype.kind == "c":
                return None
            key.append((a.dtype, a.shape))
            arrays.append(a)
        elif t is float:
            key.append((t, repr(a)))  # repr: 0.0 and -0.0 (and NaN) as the signature has them
        elif t is int or t is bool:
            key.append((t, a))
        else:
            return None
    return tuple(key), (args if len(arrays) == len(args) else tuple(arrays))


def with_statics(fast: Callable[[Sequence[Any]], Any], key: tuple
                 ) -> Callable[[Sequence[Any]], Any]:
    """``fast`` (which takes the arrays of a call keyed ``key``) taking the whole call:
    ``None`` unless its numbers are ``key``'s (by type, and value or a float's ``repr``)."""
    statics = tuple((k, t, r) for k, (t, r) in enumerate(key) if isinstance(t, type))
    if not statics or fast is no_fast_call:
        return fast
    count, numbers = len(key), {k for k, _, _ in statics}
    positions = tuple(k for k in range(count) if k not in numbers)

    def call(args: Sequence[Any]) -> Any:
        if len(args) != count:
            return None
        for k, t, r in statics:
            x = args[k]
            if type(x) is not t or (repr(x) if t is float else x) != r:
                return None
        return fast(tuple([args[k] for k in positions]))

    return call
