"""Built OpenCL programs on disk, per device, so a kernel is built by the driver only once.

``clBuildProgram`` is the slow step of loading (PoCL: translate + link its builtin library
+ optimise, 0.5-1 s per kernel; from a binary: about 1 ms). After a build,
``CL_PROGRAM_BINARIES`` is stored as an entry of an :class:`accy.runtime.ArtifactCache`
under ``accy.config.opencl_program_cache_dir()`` (``$ACCY_CACHE_DIR/opencl-programs``, the
``programs`` cache of ``accy cache info|clear``): the artifact cache's file format and trust
rules (magic, version, JSON header, payload, sha256 over the whole entry; 0600 files written
to a temporary file and published atomically; the size cap ``ACCY_CACHE_MAX_BYTES``), so a
truncated or corrupt entry is deleted and rebuilt, never handed to the driver. The key is
the device fingerprint, the sha256 of the program source (SPIR-V), the loading path and the
build options. ``ACCY_DISABLE_DISK_CACHE`` turns it off.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from accy import config
from accy.backend import Artifact

__all__ = ["ProgramCache", "program_key"]

_FORMAT = "opencl-binary"


def program_key(device_fingerprint: str, source: bytes, path: str, options: str) -> str:
    """Return the cache key of one program build."""
    digest = hashlib.sha256(source).hexdigest()
    return f"opencl-program|{device_fingerprint}|{digest}|{path}|{options}"


class ProgramCache:
    """Device program binaries, checksummed on disk (a no-op when the disk cache is off).

    Args:
        directory: where entries live; default ``cache_dir()/opencl-programs``.
    """

    def __init__(self, directory: Path | None = None) -> None:
        from accy.runtime.artifact_cache import ArtifactCache

        if directory is None and not config.disk_cache_disabled():
            directory = config.opencl_program_cache_dir()
        self._cache = ArtifactCache(directory) if directory is not None else None

    @property
    def enabled(self) -> bool:
        """Whether entries are read and written."""
        return self._cache is not None

    @property
    def stats(self) -> dict[str, int]:
        """Hits, misses and corrupt entries since construction."""
        c = self._cache
        return {"hits": c.hits, "misses": c.misses, "corrupt": c.corrupt} if c else {}

    def load(self, key: str) -> bytes | None:
        """Return the binary stored under ``key``, or ``None``."""
        if self._cache is None:
            return None
        found = self._cache.load(key)
        if found is None or found.format != _FORMAT:
            return None
        return found.data

    def store(self, key: str, kernel_name: str, binary: bytes) -> None:
        """Store ``binary`` under ``key`` (unwritable directories only warn)."""
        if self._cache is not None and binary:
            self._cache.store(key, Artifact("opencl", kernel_name, _FORMAT, binary, ""))

    def forget(self, key: str) -> None:
        """Delete the entry of ``key`` (a binary the driver refused)."""
        if self._cache is not None:
            self._cache.path_for(key).unlink(missing_ok=True)
