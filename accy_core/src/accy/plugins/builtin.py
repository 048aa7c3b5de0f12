"""accy's own plugin: registers the built-in backends through the same hooks as third parties.

Today that is the in-memory ``recording`` backend (testing only). Listed in accy-core's
entry points as ``builtin`` and registered first even when plugin autoload is disabled.
"""

from __future__ import annotations

from typing import Any

from accy.backend import API_VERSION, BackendDescriptor, ProbeResult
from accy.plugins.hookspecs import hookimpl

__all__ = ["accy_backends"]


def _probe() -> ProbeResult:
    return ProbeResult(available=True)


def _open() -> Any:
    from accy.backend.recording import RecordingBackend  # only when it is opened

    return RecordingBackend()


@hookimpl
def accy_backends() -> list[BackendDescriptor]:
    """Return the recording backend's descriptor."""
    return [
        BackendDescriptor(
            name="recording",
            api_version=API_VERSION,
            probe=_probe,
            open=_open,
            description="in-memory backend that records every call (for tests)",
            testing_only=True,
        )
    ]
