"""Export and import tuning caches as a versioned, checksummed binary archive.

Layout (little-endian)::

    offset  size  field
    0       8     magic  b"ACCYTUNE"
    8       2     format version (ARCHIVE_VERSION = 1)
    10      2     reserved (0)
    12      8     payload length in bytes
    20      32    sha256 of the payload
    52      n     payload: UTF-8 JSON {"entries": {key: entry}} (the cache's entries)

Import is all-or-nothing: the whole file is read and checked (magic, version, length,
checksum, every entry) before the cache changes, and the cache is then rewritten atomically.
A corrupt, truncated or wrong-version archive raises :class:`~accy.errors.TuningCacheError`
(with ``path`` and ``reason``) and leaves the cache as it was.
"""

from __future__ import annotations

import json
import os
import struct
from dataclasses import asdict
from pathlib import Path

from accy.errors import TuningCacheError
from accy.hashing import sha256
from accy.tuning.cache import CACHE_FORMAT, CACHE_VERSION, TuningCache, _parse_entries, atomic_write

__all__ = ["ARCHIVE_MAGIC", "ARCHIVE_VERSION", "export_archive", "import_archive", "read_archive"]

ARCHIVE_MAGIC = b"ACCYTUNE"
ARCHIVE_VERSION = 1
_HEADER = struct.Struct("<8sHHQ32s")


def export_archive(path: str | os.PathLike[str], cache: TuningCache | None = None) -> int:
    """Write every entry of ``cache`` to the archive ``path``; return the entry count.

    Raises:
        TuningCacheError: the live cache file is corrupt (nothing is written).
    """
    cache = cache or TuningCache()
    entries = cache.load(strict=True)
    payload = json.dumps({"entries": {k: asdict(v) for k, v in sorted(entries.items())}},
                         sort_keys=True).encode()
    header = _HEADER.pack(ARCHIVE_MAGIC, ARCHIVE_VERSION, 0, len(payload),
                          sha256(payload).digest())
    atomic_write(Path(path), header + payload)
    return len(entries)


def _fail(path: str, reason: str, detail: str) -> TuningCacheError:
    return TuningCacheError(f"tuning archive {path}: {detail}; the tuning cache is unchanged",
                            path=path, reason=reason)


def read_archive(path: str | os.PathLike[str]):
    """Parse and check an archive; return its entries (key → TuningEntry).

    Raises:
        TuningCacheError: unreadable, bad magic, wrong version, truncated, checksum mismatch
            or a malformed entry (``reason`` says which).
    """
    name = str(path)
    try:
        data = Path(path).read_bytes()
    except OSError as e:
        raise _fail(name, "unreadable", f"cannot read ({e})") from e
    if len(data) < _HEADER.size:
        raise _fail(name, "truncated", f"{len(data)} bytes, shorter than the "
                    f"{_HEADER.size}-byte header (truncated)")
    magic, version, _, length, digest = _HEADER.unpack_from(data)
    if magic != ARCHIVE_MAGIC:
        raise _fail(name, "magic", f"magic {magic!r}, expected {ARCHIVE_MAGIC!r} (not an accy "
                    "tuning archive)")
    if version != ARCHIVE_VERSION:
        raise _fail(name, "version", f"format version {version}, this accy reads "
                    f"{ARCHIVE_VERSION}; export it again with this version")
    payload = data[_HEADER.size:]
    if len(payload) != length:
        raise _fail(name, "truncated", f"truncated or padded: payload has {len(payload)} bytes, "
                    f"header says {length}")
    if sha256(payload).digest() != digest:
        raise _fail(name, "checksum", "sha256 checksum mismatch (corrupted)")
    try:
        doc = json.loads(payload)
        entries = doc["entries"]
    except (ValueError, KeyError, TypeError) as e:
        raise _fail(name, "payload", f"payload is not the expected JSON ({e})") from e
    try:
        return _parse_entries({"format": CACHE_FORMAT, "version": CACHE_VERSION,
                               "entries": entries}, name)
    except TuningCacheError as e:
        raise _fail(name, "entry", str(e)) from e


def import_archive(path: str | os.PathLike[str], cache: TuningCache | None = None,
                   replace: bool = False) -> int:
    """Merge (or with ``replace``, substitute) an archive into the cache; return its count.

    Raises:
        TuningCacheError: see :func:`read_archive`; the cache is then unchanged.
    """
    entries = read_archive(path)
    cache = cache or TuningCache()
    cache.store(entries, replace_all=replace)
    return len(entries)
