"""The live tuning cache file: an unusable one warns once and is rewritten by the next store;
one in a directory another user could write is neither read nor written."""

from __future__ import annotations

import os
import stat
import warnings

import pytest
from accy.errors import CacheWarning, TuningCacheError
from accy.runtime import cache_files
from accy.tuning.cache import TuningCache, TuningEntry

ENTRY = TuningEntry("dev", "kern", "n1024", "map-wg64-ipt1", 10, 20, 3)


@pytest.fixture
def cache(tmp_path):
    directory = tmp_path / "tuning"
    directory.mkdir(mode=0o700)
    return TuningCache(directory / "tuning.json")


def _warnings(record):
    return [w.message for w in record if isinstance(w.message, CacheWarning)]


@pytest.mark.parametrize("content, match", [
    (b"\xff\xfe\x00garbage", "not valid UTF-8"),
    (b"", "empty"),
    (b"  \n", "empty"),
    (b'{"format": "accy-tuning-cache", "vers', "corrupt JSON"),
    (b'{"format": "accy-tuning-cache", "version": 2, "entries": {}}', "version 2"),
    (b'"just a string"', "not an accy tuning cache"),
])
def test_unusable_file_warns_once_is_strict_error_and_store_rewrites_it(cache, content, match):
    cache.path.write_bytes(content)
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        assert cache.load() == {} and cache.load() == {}
    (w,) = _warnings(record)
    assert str(cache.path) in str(w) and match in str(w)
    with pytest.raises(TuningCacheError, match=match) as info:
        cache.load(strict=True)
    assert info.value.path == str(cache.path)
    cache.store([ENTRY])  # what 'accy tune' does: the file is rebuilt
    assert cache.load(strict=True) == {ENTRY.key: ENTRY}
    assert stat.S_IMODE(os.stat(cache.path).st_mode) == 0o600


def test_file_in_a_writable_directory_is_neither_read_nor_written(cache):
    cache.store([ENTRY])
    os.chmod(cache.path.parent, 0o777)
    with pytest.warns(CacheWarning, match="writable by group or others"):
        assert cache.load() == {}
    with pytest.raises(TuningCacheError, match="not private") as info:
        cache.store([ENTRY])
    assert info.value.reason == "unsafe"


def test_file_of_another_user_is_not_read(cache, monkeypatch):
    cache.store([ENTRY])
    monkeypatch.setattr(cache_files, "owner_is_trusted", lambda uid: False)
    with pytest.warns(CacheWarning, match="owned by uid"):
        assert cache.load() == {}


def test_file_writable_by_others_is_not_read(cache):
    cache.store([ENTRY])
    os.chmod(cache.path, 0o646)
    with pytest.warns(CacheWarning, match="writable by group or others"):
        assert cache.load() == {}
