"""The backend protocol types, from ``accy.backend`` when present, else minimal stand-ins.

The stand-ins follow the protocol spec field for field so the CPU backend works (and is
tested) while ``accy.backend.protocol`` is being written; delete them once it is stable.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "Artifact",
    "BackendDescriptor",
    "Capabilities",
    "Geometry",
    "ProbeResult",
    "TargetProfile",
]

try:
    from accy.backend import (  # type: ignore[attr-defined]
        Artifact,
        BackendDescriptor,
        Capabilities,
        Geometry,
        ProbeResult,
        TargetProfile,
    )
except ImportError:  # pragma: no cover - only until accy.backend exists

    @dataclass(frozen=True)
    class Capabilities:  # type: ignore[no-redef]
        """What a backend's device can do (see ``accy.backend.protocol``)."""

        backend: str
        device_name: str
        device_fingerprint: str
        dtypes: frozenset[str]
        artifact_formats: tuple[str, ...]
        max_workgroup_size: int
        subgroup_size: int
        shared_memory_bytes: int
        features: frozenset[str]

    @dataclass(frozen=True)
    class TargetProfile:  # type: ignore[no-redef]
        """The legalization view of :class:`Capabilities`."""

        capabilities: Capabilities

        @classmethod
        def from_capabilities(cls, caps: Capabilities) -> TargetProfile:
            """Build a profile from capabilities."""
            return cls(caps)

    @dataclass(frozen=True)
    class Artifact:  # type: ignore[no-redef]
        """A compiled kernel: bytes in ``format`` plus entry symbol and metadata."""

        backend: str
        kernel_name: str
        format: str
        data: bytes
        entry: str
        metadata: dict[str, Any] = field(default_factory=dict)

    @dataclass(frozen=True)
    class Geometry:  # type: ignore[no-redef]
        """A 1-D launch grid: ``groups`` work-groups of ``workgroup_size`` work-items."""

        groups: int
        workgroup_size: int

    @dataclass(frozen=True)
    class ProbeResult:  # type: ignore[no-redef]
        """Whether a backend is available, and why not."""

        available: bool
        reason: str = ""

    @dataclass(frozen=True)
    class BackendDescriptor:  # type: ignore[no-redef]
        """How the plugin manager finds, probes and opens a backend."""

        name: str
        probe: Any
        open: Any
        api_version: int = 1
        description: str = ""
        testing_only: bool = False
