"""On-disk cache of compiled artifacts, safe against concurrent processes and corruption.

Entry file format (one file per key, ``<sha256(key)>.acart``)::

    b"ACCYART\\0"   magic (8 bytes)
    u32 version     little-endian, currently 1
    u32 header_len  little-endian
    header          JSON: backend, kernel_name, format, entry, metadata, payload_len, key
    payload         the artifact bytes (payload_len)
    sha256          32 bytes over everything before it

Writes go to a temporary file (mode 0600) in the same directory (mode 0700) and are published
with ``os.replace`` (atomic on POSIX and Windows), so readers see a whole entry or none. An
entry that is truncated, corrupt, of another version or for another key or size is deleted
and counted as a miss (``corrupt`` counts those) with one :class:`~accy.errors.CacheWarning`
naming the file — never trusted. A directory owned by another user or writable by group or
others is not used at all (see :mod:`accy.runtime.cache_files`).

Backends may keep *materialised* files beside the entries (the CPU backend's linked programs,
``<sha256>.so``, written from a checked entry so that ``dlopen`` has a file): they count
towards the size cap, are evicted like entries and deleted by :meth:`ArtifactCache.clear`,
but are not entries (``CacheUsage.entries``).

Size cap (``ACCY_CACHE_MAX_BYTES``, default 1 GiB; 0 = no cap): when a store takes the
directory past ``max_bytes``, least recently used entries (a hit refreshes an entry's
modification time) are deleted until it holds at most 90 % of it. The directory's size is
estimated between scans (rescanned at least every minute, since other processes write too).
"""

from __future__ import annotations

import contextlib
import json
import os
import struct
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from accy.backend import Artifact
from accy.hashing import sha256
from accy.records import record
from accy.runtime import cache_files

if TYPE_CHECKING:  # paths are strings inside; the public ones become a Path when asked for,
    from pathlib import Path  # so a warm start imports no pathlib

__all__ = ["ENTRY_SUFFIX", "FORMAT_VERSION", "MAGIC", "MATERIALISED_SUFFIXES", "ArtifactCache",
           "CacheUsage", "default_cache_directory", "enabled_cache", "load_decoded"]

MAGIC = b"ACCYART\0"
FORMAT_VERSION = 1
ENTRY_SUFFIX = ".acart"
#: files that backends materialise from entries (counted in bytes and evicted, not entries)
MATERIALISED_SUFFIXES = (".so",)
_DIGEST = 32
_STALE_TEMPORARY_S = 3600.0
_RESCAN_S = 60.0
_LOW_WATER = 0.9
# directory -> (estimated bytes, time.monotonic() of the last scan): a scan stats every entry,
# so stores only rescan when the estimate passes the cap or the last scan is old
_USAGE: dict[str, tuple[int, float]] = {}
_USAGE_LOCK = threading.Lock()


@record
class CacheUsage:
    """What a cache directory holds: ``entries`` entry files, and ``bytes`` bytes in total
    with the files materialised from them."""

    entries: int
    bytes: int


class _Corrupt(Exception):
    """Why an entry was not trusted (internal)."""


def default_cache_directory() -> Path | None:
    """Return the default artifact directory, or ``None`` when disk caching is disabled.

    ``ACCY_DISABLE_DISK_CACHE`` disables it; otherwise ``accy.config.cache_dir()/artifacts``
    (``ACCY_CACHE_DIR`` or ``platformdirs.user_cache_dir("accy")``).
    """
    from accy import config

    if config.disk_cache_disabled():
        return None
    return config.artifact_cache_dir()


def enabled_cache() -> ArtifactCache | None:
    """The default :class:`ArtifactCache`, or ``None`` when the disk cache is disabled."""
    cache = ArtifactCache()
    return cache if cache.enabled else None


def load_decoded(key: str, fmt: str, decode: Callable[[bytes], Any], what: str) -> Any | None:
    """``decode(payload)`` of the default cache's entry under ``key``, which must be of
    format ``fmt``; ``None`` on a miss or when the cache is off or refused.

    An entry of another format, or whose payload ``decode`` rejects with any exception, is
    corrupt: it is deleted with one ``CacheWarning`` saying that it "holds ``what`` that
    cannot be decoded", and ``None`` is returned (the caller rebuilds it)."""
    cache = enabled_cache()
    art = cache.load(key) if cache is not None else None
    if art is None:
        return None
    try:
        if art.format != fmt:
            raise ValueError(f"format {art.format!r}")
        return decode(art.data)
    except Exception as e:  # noqa: BLE001 - any undecodable payload is a corrupt entry
        cache.discard(key, f"holds {what} that cannot be decoded ({type(e).__name__})")
        return None


def _default_directory_str() -> str | None:
    from accy import config

    if config.disk_cache_disabled():
        return None
    return config.artifact_cache_dir_str()


class ArtifactCache:
    """A directory of artifacts keyed by strings (e.g. kernel + target fingerprints).

    Args:
        directory: where entries live (created 0700 on first store); ``None`` = the default
            from :func:`default_cache_directory` (which may disable the cache).
        max_bytes: size cap in bytes (0 = none); ``None`` = ``ACCY_CACHE_MAX_BYTES``.

    Attributes:
        directory: the entry directory as a ``pathlib.Path`` (``None``: disabled).
        hits, misses, corrupt: counters since construction (``corrupt`` entries also count
            as misses).
    """

    def __init__(self, directory: str | os.PathLike[str] | None = None,
                 max_bytes: int | None = None) -> None:
        from accy import config

        if directory is None:
            self._dir = _default_directory_str()
            self._root = config.cache_dir_str() if self._dir is not None else None
        else:
            self._dir = cache_files.clean_path(directory)
            self._root = self._dir
        self.max_bytes = config.cache_max_bytes() if max_bytes is None else max_bytes
        self.hits = 0
        self.misses = 0
        self.corrupt = 0

    @property
    def directory(self) -> Path | None:
        """The entry directory (``None``: the cache is disabled)."""
        if self._dir is None:
            return None
        from pathlib import Path

        return Path(self._dir)

    @property
    def directory_str(self) -> str | None:
        """:attr:`directory` as a normalised string (no pathlib import)."""
        return self._dir

    @property
    def enabled(self) -> bool:
        """Whether the cache reads and writes files."""
        return self._dir is not None

    def trusted(self) -> bool:
        """Whether the directory may be used (one ``CacheWarning`` when it may not)."""
        if self._dir is None:
            return False
        return cache_files.check_directory(self._dir, self._root, "artifact cache")

    def path_for(self, key: str) -> Path:
        """Return the entry file for ``key``.

        Raises:
            RuntimeError: the cache is disabled.
        """
        from pathlib import Path

        return Path(self._file_for(key))

    def _file_for(self, key: str) -> str:
        if self._dir is None:
            raise RuntimeError("artifact cache is disabled (ACCY_DISABLE_DISK_CACHE)")
        return os.path.join(self._dir, sha256(key.encode()).hexdigest() + ENTRY_SUFFIX)

    def load(self, key: str) -> Any | None:
        """Return the artifact stored under ``key``, or ``None`` (miss, disabled, refused
        directory, or an untrusted entry: that one is deleted with a ``CacheWarning``)."""
        if self._dir is None or not self.trusted():
            self.misses += 1
            return None
        path = self._file_for(key)
        try:
            blob = cache_files.read_cache_file(path)
            artifact = self._decode(blob, key)
        except FileNotFoundError:
            self.misses += 1
            return None
        except cache_files.UnsafeCacheFile as e:
            self._drop(path, e.reason)
            return None
        except OSError as e:
            self._drop(path, f"cannot be read ({e.strerror or e})")
            return None
        except _Corrupt as e:
            self._drop(path, str(e))
            return None
        self.hits += 1
        with contextlib.suppress(OSError):  # least recently used = oldest modification time
            os.utime(path)
        return artifact

    def discard(self, key: str, why: str) -> None:
        """Delete the entry of ``key``, which its reader could not use (one ``CacheWarning``
        saying ``why``, counted as corrupt); no-op when the cache is disabled."""
        if self._dir is not None:
            self.hits -= 1
            self._drop(self._file_for(key), why)

    def _drop(self, path: str, why: str) -> None:
        self.corrupt += 1
        self.misses += 1
        cache_files.warn_once(path, "corrupt", f"artifact cache entry {str(path)!r} {why}; "
                              "it is deleted and rebuilt", cache_files.file_token(path))
        with contextlib.suppress(OSError):
            os.unlink(path)

    def store(self, key: str, artifact: Any) -> None:
        """Write ``artifact`` under ``key`` atomically, then enforce the size cap (no-op when
        disabled, refused, or the artifact alone exceeds the cap).

        A directory that cannot be written (read-only, a file, disk full) gives one
        ``CacheWarning`` (a ``RuntimeWarning``) per process instead of an error: the cache is
        an optimisation.
        """
        if self._dir is None:
            return
        try:
            blob = self._encode(key, artifact)
            if self.max_bytes and len(blob) > self.max_bytes:
                return
            cache_files.ensure_directory_str(self._dir)
            if not self.trusted():
                return
            cache_files.write_cache_file(self._file_for(key), blob)
        except OSError as e:  # read-only or misconfigured cache: compiling still works
            cache_files.warn_once(
                self._dir, "unwritable",
                f"artifact cache {self._dir!r} is not writable ({e.strerror or e}); "
                "artifacts are not cached on disk; point ACCY_CACHE_DIR at a writable directory")
            return
        if self.max_bytes:
            self._enforce_cap(len(blob))

    def materialised(self, nbytes: int) -> None:
        """Count a file of ``nbytes`` that a backend wrote into the directory (one of
        ``MATERIALISED_SUFFIXES``) towards the size cap, evicting as :meth:`store` does."""
        if self._dir is not None and self.max_bytes:
            self._enforce_cap(nbytes)

    def _enforce_cap(self, added: int) -> None:
        key, now = str(self._dir), time.monotonic()
        with _USAGE_LOCK:
            estimate, scanned = _USAGE.get(key, (-1, 0.0))
            if 0 <= estimate and estimate + added <= self.max_bytes and now - scanned < _RESCAN_S:
                _USAGE[key] = (estimate + added, scanned)
                return
        _, remaining = self._evict_to(int(self.max_bytes * _LOW_WATER), self.max_bytes)
        with _USAGE_LOCK:
            _USAGE[key] = (remaining, now)

    def _entries(self) -> list[tuple[Path, os.stat_result]]:
        if self.directory is None:
            return []
        out = []
        try:
            names = os.listdir(self.directory)
        except OSError:
            return []
        now = time.time()
        for name in names:
            path = self.directory / name
            try:
                st = path.stat()
            except OSError:
                continue
            if name.endswith(ENTRY_SUFFIX) or name.endswith(MATERIALISED_SUFFIXES):
                out.append((path, st))
            elif name.startswith(".tmp-") and now - st.st_mtime > _STALE_TEMPORARY_S:
                with contextlib.suppress(OSError):  # left by a writer that was killed
                    path.unlink()
        return out

    def usage(self) -> CacheUsage:
        """Entries and bytes the directory holds now (0, 0 when absent or disabled)."""
        files = self._entries()
        return CacheUsage(sum(p.name.endswith(ENTRY_SUFFIX) for p, _ in files),
                          sum(st.st_size for _, st in files))

    def evict(self, max_bytes: int) -> int:
        """Delete least recently used entries (and materialised files) until at most
        ``max_bytes`` remain; return how many files were deleted."""
        return self._evict_to(max_bytes, max_bytes)[0]

    def _evict_to(self, target: int, trigger: int) -> tuple[int, int]:
        """Past ``trigger`` bytes, delete LRU entries down to ``target``; (deleted, left)."""
        entries = sorted(self._entries(), key=lambda e: e[1].st_mtime_ns)
        total = sum(st.st_size for _, st in entries)
        removed = 0
        if total <= trigger:
            return 0, total
        for path, st in entries:
            if total <= target:
                break
            with contextlib.suppress(FileNotFoundError):  # another process evicted it
                path.unlink()
            total -= st.st_size
            removed += 1
        return removed, total

    def clear(self) -> CacheUsage:
        """Delete every entry, materialised file and stray temporary file; return what was
        deleted."""
        deleted = self.usage()
        if self.directory is not None:
            for path in [p for s in (ENTRY_SUFFIX, *MATERIALISED_SUFFIXES)
                         for p in self.directory.glob(f"*{s}")]:
                with contextlib.suppress(FileNotFoundError):
                    path.unlink()
            for path in self.directory.glob(".tmp-*"):
                with contextlib.suppress(FileNotFoundError):
                    path.unlink()
        return deleted

    @staticmethod
    def _encode(key: str, artifact: Any) -> bytes:
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
        return body + sha256(body).digest()

    @staticmethod
    def _decode(blob: bytes, key: str) -> Any:
        """The artifact in ``blob``; raises ``_Corrupt`` saying why it is not trusted."""
        fixed = len(MAGIC) + 8
        if len(blob) < fixed + _DIGEST:
            raise _Corrupt(f"is truncated ({len(blob)} bytes)")
        if not blob.startswith(MAGIC):
            raise _Corrupt("is not an accy artifact (bad magic)")
        body, digest = blob[:-_DIGEST], blob[-_DIGEST:]
        if sha256(body).digest() != digest:
            raise _Corrupt("has a bad checksum (corrupt or truncated)")
        version, header_len = struct.unpack_from("<II", blob, len(MAGIC))
        if version != FORMAT_VERSION:
            raise _Corrupt(f"has format version {version}, this accy reads {FORMAT_VERSION}")
        if fixed + header_len > len(body):
            raise _Corrupt("has a header longer than the file")
        try:
            header = json.loads(body[fixed : fixed + header_len])
            payload = body[fixed + header_len :]
            if header.get("key") != key:
                raise _Corrupt("is stored for another key")
            if header.get("payload_len") != len(payload):
                raise _Corrupt("has a payload of the wrong size")
            return Artifact(
                backend=header["backend"],
                kernel_name=header["kernel_name"],
                format=header["format"],
                data=bytes(payload),
                entry=header["entry"],
                metadata=header["metadata"],
            )
        except (ValueError, TypeError, KeyError, AttributeError) as e:
            raise _Corrupt(f"has a malformed header ({type(e).__name__})") from e
