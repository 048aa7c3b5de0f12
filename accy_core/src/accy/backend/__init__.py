"""Backend protocol facade: the protocol, its value types, descriptors and the recording backend.

Import from here (``from accy.backend import Geometry``), not from the submodules. Nothing
here imports a device driver or LLVM.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from accy.backend.descriptor import BackendDescriptor, ProbeResult
from accy.backend.protocol import (
    API_VERSION,
    FEATURES,
    Artifact,
    Backend,
    Capabilities,
    Geometry,
    TargetProfile,
)

if TYPE_CHECKING:
    from accy.backend.recording import RecordingBackend

__all__ = [
    "API_VERSION",
    "FEATURES",
    "Artifact",
    "Backend",
    "BackendDescriptor",
    "Capabilities",
    "Geometry",
    "ProbeResult",
    "RecordingBackend",
    "TargetProfile",
]


def __getattr__(name: str) -> Any:
    # the recording backend (tests) loads on first use: opening a real backend needs it not
    if name == "RecordingBackend":
        from accy.backend.recording import RecordingBackend

        return RecordingBackend
    raise AttributeError(f"module 'accy.backend' has no attribute {name!r}")
