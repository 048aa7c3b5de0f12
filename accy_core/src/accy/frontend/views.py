"""Views of traced arrays: what keeps ``v = x[1:]`` consistent with later writes to ``x``.

In numpy, basic indexing (integers, slices, ``None``, ``...``), ``.T``, ``transpose`` and
``reshape`` return *views*: a later ``x[0] = 1`` shows through ``v``, and ``v[:] = 0``
writes into ``x``. A traced array made by one of those records a :class:`ViewOf` its base:

- reading it after its base was written (the base's version moved) re-derives it from the
  base's current value, so a view is never stale;
- writing into it writes the updated view back into its base (``write_back``), so the
  write shows through the base and every other view of it.

This module imports nothing else of the frontend: the derive and write-back functions come
from the op groups that make views (:mod:`accy.frontend.indexing`,
:mod:`accy.frontend.shape_api`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["ViewOf", "mark_view"]


class ViewOf:
    """How a view relates to its base array.

    Attributes:
        base: the traced array the view was taken from.
        derive: ``derive(base) -> Value``: the view's value from the base's current value.
        write_back: ``write_back(base, view)``: store the view's value into the base.
        seen: the base's version the view's value was derived from.
    """

    __slots__ = ("base", "derive", "write_back", "seen")

    def __init__(self, base: Any, derive: Callable[[Any], Any],
                 write_back: Callable[[Any, Any], None]) -> None:
        self.base = base
        self.derive = derive
        self.write_back = write_back
        self.seen = base._version

    def refresh(self, view: Any) -> None:
        """Re-derive ``view`` when its base was written since it was last derived."""
        base = self.base
        base.value  # noqa: B018 - refreshes the base first when it is a view itself
        if base._version != self.seen:
            self.seen = base._version
            view._rebind(self.derive(base))

    def store(self, view: Any) -> None:
        """Write ``view``'s (just updated) value back into the base."""
        self.write_back(self.base, view)
        self.seen = self.base._version


def mark_view(result: Any, base: Any, derive: Callable[[Any], Any],
              write_back: Callable[[Any, Any], None]) -> Any:
    """Record ``result`` as a view of ``base`` (see :class:`ViewOf`); returns ``result``."""
    if result is not base:
        result._view = ViewOf(base, derive, write_back)
    return result
