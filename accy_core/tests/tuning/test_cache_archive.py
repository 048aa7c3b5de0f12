"""Tuning cache and archives: atomic writes, export → import round trip, and corrupt,
truncated or wrong-version archives that change nothing and say why."""

from __future__ import annotations

import json
import struct

import pytest
from accy.errors import CacheWarning, TuningCacheError
from accy.tuning.archive import ARCHIVE_MAGIC, export_archive, import_archive
from accy.tuning.cache import TuningCache, TuningEntry


def _entries(n: int = 3) -> list[TuningEntry]:
    return [TuningEntry("dev:1", f"k{i:02d}", f"map-out{64 << i}-red0", "map-wg64-ipt4",
                        1000 + i, 1200 + i, 5) for i in range(n)]


@pytest.fixture
def cache(tmp_path) -> TuningCache:
    c = TuningCache(tmp_path / "cache" / "tuning.json")
    c.store(_entries())
    return c


def test_store_is_atomic_and_leaves_no_temporaries(cache, tmp_path):
    assert set(cache.load()) == {e.key for e in _entries()}
    assert [p.name for p in cache.path.parent.iterdir()] == ["tuning.json"]
    doc = json.loads(cache.path.read_text())
    assert doc["format"] == "accy-tuning-cache" and doc["version"] == 1


def test_lookup_by_device_kernel_and_shape_family(cache):
    e = _entries()[1]
    assert cache.lookup(e.device, e.kernel, e.shape_family) == e
    assert cache.lookup("other-device", e.kernel, e.shape_family) is None


def test_export_import_round_trip(cache, tmp_path):
    archive = tmp_path / "t.accytune"
    assert export_archive(archive, cache) == 3
    assert archive.read_bytes().startswith(ARCHIVE_MAGIC)
    fresh = TuningCache(tmp_path / "other.json")
    assert import_archive(archive, fresh) == 3
    assert fresh.load() == cache.load()


def _corruptions(data: bytes) -> dict[str, bytes]:
    flipped = bytearray(data)
    flipped[-5] ^= 0xFF
    wrong_version = data[:8] + struct.pack("<H", 99) + data[10:]
    return {"checksum": bytes(flipped), "truncated": data[: len(data) - 7],
            "truncated-header": data[:20], "version": wrong_version,
            "magic": b"NOTACCY!" + data[8:]}


@pytest.mark.parametrize("reason", ["checksum", "truncated", "truncated-header", "version",
                                    "magic"])
def test_bad_archive_changes_nothing_and_says_why(cache, tmp_path, reason):
    archive = tmp_path / "t.accytune"
    other = TuningCache(tmp_path / "src.json")
    other.store([TuningEntry("dev:2", "kx", "fam", "serial-wg32-ipt1", 1, 2, 3)])
    export_archive(archive, other)
    archive.write_bytes(_corruptions(archive.read_bytes())[reason])
    before = cache.path.read_bytes()
    with pytest.raises(TuningCacheError) as info:
        import_archive(archive, cache)
    assert info.value.reason == reason.removesuffix("-header")
    assert info.value.path == str(archive)
    assert "unchanged" in str(info.value)
    assert cache.path.read_bytes() == before


def test_a_malformed_entry_rejects_the_whole_archive(cache, tmp_path):
    import hashlib

    payload = json.dumps({"entries": {"a|b|c": {"device": "a", "kernel": "b",
                                                "shape_family": "c", "choice": "nonsense"}}})
    body = payload.encode()
    header = struct.pack("<8sHHQ32s", ARCHIVE_MAGIC, 1, 0, len(body),
                         hashlib.sha256(body).digest())
    archive = tmp_path / "bad.accytune"
    archive.write_bytes(header + body)
    before = cache.path.read_bytes()
    with pytest.raises(TuningCacheError, match="malformed entry"):
        import_archive(archive, cache)
    assert cache.path.read_bytes() == before


def test_corrupt_live_cache_is_ignored_by_lookups_and_reported_when_strict(tmp_path):
    c = TuningCache(tmp_path / "tuning.json")
    c.path.write_text('{"format": "accy-tuning-cache", "version": 1, "entr')
    with pytest.warns(CacheWarning, match="tuning.json: corrupt JSON"):
        assert c.load() == {}
    with pytest.raises(TuningCacheError, match="corrupt JSON"):
        c.load(strict=True)
    c.path.write_text(json.dumps({"format": "accy-tuning-cache", "version": 7, "entries": {}}))
    with pytest.raises(TuningCacheError, match="version 7, expected 1"):
        c.load(strict=True)
