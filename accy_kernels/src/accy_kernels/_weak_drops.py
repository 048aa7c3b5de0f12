"""Dropping a cache entry when the object it belongs to is collected, without a deadlock.

The per-matrix caches (:mod:`accy_kernels.spmv_fast`, :mod:`accy_kernels._layout_cache`)
hold a weak reference to each matrix and drop its entry in the reference's callback. A
callback runs wherever the matrix dies: in the middle of any code, possibly in a thread
that holds the cache's own (non-reentrant) lock — a collection triggered inside the
locked section, or ``del A`` there — and taking the lock again would hang that thread for
good. So a callback only notes the dead entry, and drops it at once when the lock is free
(``acquire(blocking=False)``); otherwise the cache's next locked operation drops it
(:meth:`WeakDrops.purge`).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, MutableMapping
from typing import Any

__all__ = ["WeakDrops"]


class WeakDrops:
    """Weak-reference callbacks for the entries of ``entries`` guarded by ``lock``.

    Args:
        lock: the cache's lock (``threading.Lock``).
        entries: key → entry.
        ref_of: the weak reference an entry holds (an entry is dropped only while it still
            holds the reference that died: a key reused by a newer entry stays).
    """

    def __init__(self, lock: threading.Lock, entries: MutableMapping[Any, Any],
                 ref_of: Callable[[Any], Any]) -> None:
        self._lock = lock
        self._entries = entries
        self._ref_of = ref_of
        self._dead: list[tuple[Any, Any]] = []

    def callback(self, key: Any) -> Callable[[Any], None]:
        """The callback to give ``weakref.ref(obj, ...)`` for the entry under ``key``."""
        return lambda ref: self._collected(key, ref)

    def _collected(self, key: Any, ref: Any) -> None:
        self._dead.append((key, ref))
        if self._lock.acquire(blocking=False):  # never waits: this thread may hold it
            try:
                self.purge()
            finally:
                self._lock.release()

    def purge(self) -> None:
        """Drop the entries of collected objects (call with the lock held)."""
        while self._dead:
            key, ref = self._dead.pop()
            entry = self._entries.get(key)
            if entry is not None and self._ref_of(entry) is ref:
                del self._entries[key]
