"""How ``accy.jit`` keys a call by its arguments' static values.

A signature (``Jitted._signature``) keys static values by type and value (:func:`_typed`);
``static_argnums`` values are wrapped in :class:`_Static`, which flattening keeps whole.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["_Static", "_mark_static", "_typed", "_unmark"]


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
