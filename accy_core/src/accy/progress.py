"""Progress bars for long commands (``accy profile``, ``accy tune``), drawn with rich.

One console library for accy: rich (a declared dependency of accy-core). Bars go to stderr,
so ``accy profile -o -`` keeps stdout clean JSON lines; on a stream that is not a terminal
rich draws nothing until the end and then prints the bar's final state once.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import TypeVar

__all__ = ["track"]

T = TypeVar("T")


def track(items: Sequence[T], label: str, unit: str, *, show: bool = True,
          transient: bool = False) -> Iterator[T] | Iterable[T]:
    """Iterate over ``items`` with a progress bar labelled ``label`` (``unit`` per step).

    Args:
        items: a sized sequence (its length is the bar's total).
        label: text left of the bar; unit: what one step is (``"case"``, ``"kernel"``).
        show: False returns ``items`` unchanged (no bar, no rich import).
        transient: remove the bar from the terminal when done (nested bars).
    """
    if not show:
        return items
    from rich.console import Console
    from rich.progress import track as rich_track

    return rich_track(items, description=f"{label} ({len(items)} {unit}s)",
                      console=Console(stderr=True), transient=transient)
