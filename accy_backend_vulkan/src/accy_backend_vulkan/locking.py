"""Thread safety of the Vulkan backend: one re-entrant lock around its device entry points.

Vulkan requires external synchronization of queues, command pools, descriptor pools and
the backend's memory lists, and executables (or kernel-family calls) running in different
threads share one backend: without the lock, concurrent submissions crashed lavapipe
(segfault in ``vkQueueSubmit``). ``compile`` (pure code generation) stays unlocked.
"""

from __future__ import annotations

import functools
from typing import Any

__all__ = ["SERIALIZED", "serialize_methods"]

#: Methods that touch the queue, command pool, descriptor pool or memory lists.
SERIALIZED = (
    "load", "allocate", "write", "read", "fill", "copy", "free", "trim", "launch", "destroy",
    "close", "create_stream", "create_event", "synchronize",
)


def _serialized(method: Any) -> Any:
    @functools.wraps(method)
    def locked(self: Any, *args: Any, **kwargs: Any) -> Any:
        with self._api_lock:
            return method(self, *args, **kwargs)

    return locked


def serialize_methods(cls: type, names: tuple[str, ...]) -> None:
    """Wrap ``cls``'s methods ``names`` so each holds the instance's ``_api_lock`` (an RLock
    the class creates in ``__init__``)."""
    for name in names:
        setattr(cls, name, _serialized(getattr(cls, name)))
