"""The Vulkan pipeline cache, persisted next to the compile cache.

File: ``accy.config.cache_dir()/vulkan-pipelines/<device fingerprint>.bin``, written
atomically (temporary file + ``os.replace``; files 0600, directories 0700). A blob is only
handed to the driver when its header (Vulkan 1.3 spec, 10.7.4 "Pipeline Cache Header":
``headerSize`` >= 32, ``headerVersion`` = ``VK_PIPELINE_CACHE_HEADER_VERSION_ONE``,
``vendorID``, ``deviceID``, ``pipelineCacheUUID``) matches this device; an empty, truncated,
corrupt or foreign blob is ignored with one :class:`~accy.errors.CacheWarning` naming the
file (and overwritten at the next save), never trusted. A directory owned by another user or
writable by group or others is not used (see :mod:`accy.runtime.cache_files`). Disabled
with ``ACCY_DISABLE_DISK_CACHE``.
"""

from __future__ import annotations

import hashlib
import struct
from dataclasses import dataclass
from pathlib import Path

from accy import config
from accy.runtime import cache_files

__all__ = ["DeviceIdentity", "cache_path", "load_blob", "save_blob", "valid_header"]

_HEADER = struct.Struct("<IIII16s")
_HEADER_VERSION_ONE = 1


@dataclass(frozen=True)
class DeviceIdentity:
    """What a pipeline cache blob must match: vendor, device, driver, cache UUID (16 bytes)."""

    vendor_id: int
    device_id: int
    driver_version: int
    uuid: bytes

    def fingerprint(self) -> str:
        """Return a short hex name for this device's cache file."""
        text = f"{self.vendor_id:x}-{self.device_id:x}-{self.driver_version:x}-{self.uuid.hex()}"
        return hashlib.sha256(text.encode()).hexdigest()[:32]


def valid_header(blob: bytes, device: DeviceIdentity) -> bool:
    """Return whether ``blob`` starts with a version-one header naming ``device``."""
    if len(blob) < _HEADER.size:
        return False
    size, version, vendor, device_id, uuid = _HEADER.unpack_from(blob)
    return (
        _HEADER.size <= size <= len(blob)
        and version == _HEADER_VERSION_ONE
        and vendor == device.vendor_id
        and device_id == device.device_id
        and uuid == device.uuid
    )


def cache_path(device: DeviceIdentity) -> Path | None:
    """Return the cache file of ``device`` (``None`` when the disk cache is disabled)."""
    if config.disk_cache_disabled():
        return None
    return config.pipeline_cache_dir() / f"{device.fingerprint()}.bin"


def _trusted(path: Path) -> bool:
    return cache_files.check_directory(path.parent, config.cache_dir(), "Vulkan pipeline cache")


def load_blob(device: DeviceIdentity) -> bytes | None:
    """Return the stored blob for ``device`` if it exists, may be trusted and its header
    matches (otherwise ``None``, with one ``CacheWarning`` for a file that is unusable)."""
    path = cache_path(device)
    if path is None or not _trusted(path):
        return None
    try:
        blob = cache_files.read_cache_file(path)
    except FileNotFoundError:
        return None
    except cache_files.UnsafeCacheFile as e:
        why = e.reason
    except OSError as e:
        why = f"cannot be read ({e.strerror or e})"
    else:
        if valid_header(blob, device):
            return blob
        why = ("is empty" if not blob else
               "has no valid pipeline cache header for this device (truncated or corrupt)")
    cache_files.warn_once(path, "corrupt", f"Vulkan pipeline cache {str(path)!r} {why}; it is "
                          "ignored and rebuilt", cache_files.file_token(path))
    return None


def save_blob(device: DeviceIdentity, blob: bytes) -> Path | None:
    """Write ``blob`` atomically; returns the path, or ``None`` (disabled, invalid, or the
    directory is not writable or not trusted: a cache is an optimisation, never an error)."""
    path = cache_path(device)
    if path is None or not valid_header(blob, device):
        return None
    try:
        cache_files.ensure_directory(path.parent)
        if not _trusted(path):
            return None
        cache_files.write_cache_file(path, blob)
    except OSError:
        return None
    return path
