"""The Vulkan pipeline cache, persisted next to the compile cache.

File: ``accy.config.cache_dir()/vulkan-pipelines/<device fingerprint>.bin``, written
atomically (temporary file + ``os.replace``). A blob is only handed to the driver when its
header (Vulkan 1.3 spec, 10.7.4 "Pipeline Cache Header": ``headerSize`` >= 32,
``headerVersion`` = ``VK_PIPELINE_CACHE_HEADER_VERSION_ONE``, ``vendorID``, ``deviceID``,
``pipelineCacheUUID``) matches this device; a truncated, corrupt or foreign blob is ignored
(and overwritten at the next save), never trusted. Disabled with ``ACCY_DISABLE_DISK_CACHE``.
"""

from __future__ import annotations

import hashlib
import os
import struct
import tempfile
from dataclasses import dataclass
from pathlib import Path

from accy import config

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
    return config.cache_dir() / "vulkan-pipelines" / f"{device.fingerprint()}.bin"


def load_blob(device: DeviceIdentity) -> bytes | None:
    """Return the stored blob for ``device`` if it exists and its header matches."""
    path = cache_path(device)
    if path is None:
        return None
    try:
        blob = path.read_bytes()
    except OSError:
        return None
    return blob if valid_header(blob, device) else None


def save_blob(device: DeviceIdentity, blob: bytes) -> Path | None:
    """Write ``blob`` atomically; returns the path, or ``None`` (disabled, invalid, or the
    directory is not writable: a cache is an optimisation, never an error)."""
    path = cache_path(device)
    if path is None or not valid_header(blob, device):
        return None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=path.name, suffix=".tmp", dir=path.parent)
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(blob)
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
    except OSError:
        return None
    return path
