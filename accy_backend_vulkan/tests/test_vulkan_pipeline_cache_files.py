"""The persisted pipeline cache file (no device needed): private modes, one warning for an
unusable blob, and never a blob from a directory another user could write."""

from __future__ import annotations

import os
import stat
import struct
import warnings

import pytest
from accy.errors import CacheWarning
from accy.runtime import cache_files

from accy_backend_vulkan import pipeline_cache as pc

IDENT = pc.DeviceIdentity(0x10005, 0x0000, 1, b"u" * 16)


def _blob(payload: bytes = b"driver data", uuid: bytes = IDENT.uuid) -> bytes:
    return struct.pack("<IIII16s", 32, 1, IDENT.vendor_id, IDENT.device_id, uuid) + payload


@pytest.fixture
def cache_root(tmp_path, monkeypatch):
    monkeypatch.setenv("ACCY_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("ACCY_DISABLE_DISK_CACHE", raising=False)
    return tmp_path / "cache"


def _mode(path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def test_saved_blob_is_private(cache_root):
    path = pc.save_blob(IDENT, _blob())
    assert _mode(cache_root) == _mode(path.parent) == 0o700 and _mode(path) == 0o600
    assert pc.load_blob(IDENT) == _blob()


@pytest.mark.parametrize("content", [
    b"", b"\xff" * 7, _blob()[:20], _blob(uuid=b"v" * 16), "é".encode("latin-1") * 64,
], ids=["empty", "truncated", "short-header", "foreign-device", "not-utf8"])
def test_unusable_blob_warns_once_naming_the_file(cache_root, content):
    path = pc.save_blob(IDENT, _blob())
    path.write_bytes(content)
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        assert pc.load_blob(IDENT) is None
        assert pc.load_blob(IDENT) is None
    found = [w.message for w in record if isinstance(w.message, CacheWarning)]
    assert len(found) == 1 and str(path) in str(found[0])
    assert pc.save_blob(IDENT, _blob(b"new")) == path  # rebuilt at the next save
    assert pc.load_blob(IDENT) == _blob(b"new")


def test_blob_in_a_world_writable_directory_is_not_handed_to_the_driver(cache_root):
    path = pc.save_blob(IDENT, _blob())
    os.chmod(path.parent, 0o777)
    with pytest.warns(CacheWarning, match="writable by group or others"):
        assert pc.load_blob(IDENT) is None
    assert pc.save_blob(IDENT, _blob(b"other")) is None  # nor written there
    assert path.read_bytes() == _blob()


def test_blob_of_another_user_is_not_handed_to_the_driver(cache_root, monkeypatch):
    pc.save_blob(IDENT, _blob())
    monkeypatch.setattr(cache_files, "owner_is_trusted", lambda uid: False)
    with pytest.warns(CacheWarning, match="owned by uid"):
        assert pc.load_blob(IDENT) is None
