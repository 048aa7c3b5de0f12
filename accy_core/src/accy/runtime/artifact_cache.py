"""On-disk cache of compiled artifacts, safe against concurrent processes and corruption.

Entry file format (one file per key, ``<sha256(key)>.acart``)::

    b"ACCYART\\0"   magic (8 bytes)
    u32 version     little-endian, currently 1
    u32 header_len  little-endian
    header          JSON: backend, kernel_name, format, entry, metadata, payload_len, key
    payload         the artifact bytes (payload_len)
    sha256          32 bytes over everything before it

Writes go to a temporary file in the same directory and are published with ``os.replace``
(atomic on POSIX and Windows), so readers see a whole entry or none. An entry that is
truncated, corrupt, of another version or for another key is deleted and counted as a miss
(``corrupt`` counts those) — never trusted.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import struct
import tempfile
import warnings
from pathlib import Path
from typing import Any

from accy.backend import Artifact

__all__ = ["FORMAT_VERSION", "MAGIC", "ArtifactCache", "default_cache_directory"]

MAGIC = b"ACCYART\0"
FORMAT_VERSION = 1
_DIGEST = 32


def default_cache_directory() -> Path | None:
    """Return the default artifact directory, or ``None`` when disk caching is disabled.

    ``ACCY_DISABLE_DISK_CACHE`` disables it; otherwise ``accy.config.cache_dir()/artifacts``
    (``ACCY_CACHE_DIR`` or ``platformdirs.user_cache_dir("accy")``).
    """
    from accy import config

    if config.disk_cache_disabled():
        return None
    return Path(config.cache_dir()) / "artifacts"


class ArtifactCache:
    """A directory of artifacts keyed by strings (e.g. kernel + target fingerprints).

    Args:
        directory: where entries live (created on first store); ``None`` = the default from
            :func:`default_cache_directory` (which may disable the cache).

    Attributes:
        hits, misses, corrupt: counters since construction (``corrupt`` entries also count
            as misses).
    """

    def __init__(self, directory: str | os.PathLike[str] | None = None) -> None:
        self.directory = Path(directory) if directory is not None else default_cache_directory()
        self.hits = 0
        self.misses = 0
        self.corrupt = 0

    @property
    def enabled(self) -> bool:
        """Whether the cache reads and writes files."""
        return self.directory is not None

    def path_for(self, key: str) -> Path:
        """Return the entry file for ``key``.

        Raises:
            RuntimeError: the cache is disabled.
        """
        if self.directory is None:
            raise RuntimeError("artifact cache is disabled (ACCY_DISABLE_DISK_CACHE)")
        return self.directory / (hashlib.sha256(key.encode()).hexdigest() + ".acart")

    def load(self, key: str) -> Any | None:
        """Return the artifact stored under ``key``, or ``None`` (miss, disabled, corrupt)."""
        if self.directory is None:
            self.misses += 1
            return None
        path = self.path_for(key)
        try:
            blob = path.read_bytes()
        except OSError:
            self.misses += 1
            return None
        artifact = self._decode(blob, key)
        if artifact is None:
            self.corrupt += 1
            self.misses += 1
            with contextlib.suppress(OSError):
                path.unlink()
            return None
        self.hits += 1
        return artifact

    def store(self, key: str, artifact: Any) -> None:
        """Write ``artifact`` under ``key`` atomically (no-op when disabled).

        A directory that cannot be written (read-only, a file, disk full) gives a
        ``RuntimeWarning`` instead of an error: the cache is an optimisation.
        """
        if self.directory is None:
            return
        try:
            self._write(key, artifact)
        except OSError as e:  # read-only or misconfigured cache: compiling still works
            warnings.warn(
                f"artifact cache {str(self.directory)!r} is not writable ({e}); the artifact "
                "is not cached on disk; point ACCY_CACHE_DIR at a writable directory",
                RuntimeWarning, stacklevel=2,
            )

    def _write(self, key: str, artifact: Any) -> None:
        assert self.directory is not None
        self.directory.mkdir(parents=True, exist_ok=True)
        header = json.dumps(
            {
                "key": key,
                "backend": artifact.backend,
                "kernel_name": artifact.kernel_name,
                "format": artifact.format,
                "entry": artifact.entry,
                "metadata": artifact.metadata,
                "payload_len": len(artifact.data),
            },
            sort_keys=True,
        ).encode()
        body = MAGIC + struct.pack("<II", FORMAT_VERSION, len(header)) + header + artifact.data
        blob = body + hashlib.sha256(body).digest()
        fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=self.directory)
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(blob)
            os.replace(tmp, self.path_for(key))
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise

    @staticmethod
    def _decode(blob: bytes, key: str) -> Any | None:
        fixed = len(MAGIC) + 8
        if len(blob) < fixed + _DIGEST or not blob.startswith(MAGIC):
            return None
        body, digest = blob[:-_DIGEST], blob[-_DIGEST:]
        if hashlib.sha256(body).digest() != digest:
            return None
        version, header_len = struct.unpack_from("<II", blob, len(MAGIC))
        if version != FORMAT_VERSION or fixed + header_len > len(body):
            return None
        try:
            header = json.loads(body[fixed : fixed + header_len])
        except ValueError:
            return None
        payload = body[fixed + header_len :]
        if header.get("key") != key or header.get("payload_len") != len(payload):
            return None
        return Artifact(
            backend=header["backend"],
            kernel_name=header["kernel_name"],
            format=header["format"],
            data=bytes(payload),
            entry=header["entry"],
            metadata=header["metadata"],
        )
