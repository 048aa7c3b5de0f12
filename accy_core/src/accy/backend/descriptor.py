"""How a plugin declares a backend without importing its driver.

A plugin's ``accy_backends()`` hook returns :class:`BackendDescriptor` values. Building one
must stay cheap: the heavy import (``vulkan``, ``pycuda``) happens inside ``probe`` and
``open``, which accy calls only when the backend is listed or used.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from accy.records import record

if TYPE_CHECKING:
    from accy.backend.protocol import Backend

__all__ = ["BackendDescriptor", "ProbeResult"]


@record  # built without exec (accy.records): plugins construct it, none subclasses it
class ProbeResult:
    """Say whether a backend can run here and, if not, why (``reason``, one line)."""

    available: bool
    reason: str = ""


@record  # no exec (accy.records, ~1.5 ms of a warm first call as a dataclass); plugins
# may still subclass it with @dataclass(frozen=True)
class BackendDescriptor:
    """Declare a backend: its name, protocol version, a probe and an opener.

    Attributes:
        name: lowercase backend name (``"cpu"``, ``"vulkan"``); unique across plugins.
        api_version: the :data:`accy.backend.API_VERSION` the backend implements; a
            mismatch is refused with both numbers in the message.
        probe: returns a :class:`ProbeResult`; must not raise for a missing driver or
            device (say why instead) and should be cheap.
        open: returns a live :class:`~accy.backend.Backend`; may import heavy modules.
        description: one line for ``accy backends``.
        testing_only: left out of the cross-backend test matrix (e.g. ``"recording"``).
        open_compile_only: optional; returns a device-less backend that compiles and emits
            (PTX, SPIR-V) where the device cannot be opened (``accy compile --emit``).
    """

    name: str
    api_version: int
    probe: Callable[[], ProbeResult]
    open: Callable[[], Backend]
    description: str = ""
    testing_only: bool = False
    open_compile_only: Callable[[], Backend] | None = None
