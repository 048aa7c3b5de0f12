"""The artifact cache on disk without a backend: private modes, refused directories, every
kind of unusable entry (one CacheWarning naming it, then a miss), and the LRU size cap."""

from __future__ import annotations

import hashlib
import json
import os
import stat
import struct
import warnings

import pytest
from accy import config
from accy.backend import Artifact
from accy.errors import AccyWarning, CacheWarning, InputError
from accy.runtime import cache_files
from accy.runtime.artifact_cache import FORMAT_VERSION, MAGIC, ArtifactCache


def _art(data: bytes = b"\x90" * 100, name: str = "k") -> Artifact:
    return Artifact(backend="cpu", kernel_name=name, format="obj", data=data, entry=name,
                    metadata={"workgroup_size": 64})


def _frame(key: str, payload: bytes, version: int = FORMAT_VERSION, payload_len=None,
           header_key=None) -> bytes:
    header = json.dumps({"key": header_key or key, "backend": "cpu", "kernel_name": "k",
                         "format": "obj", "entry": "k", "metadata": {},
                         "payload_len": len(payload) if payload_len is None else payload_len},
                        sort_keys=True).encode()
    body = MAGIC + struct.pack("<II", version, len(header)) + header + payload
    return body + hashlib.sha256(body).digest()


def _mode(path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def _cache_warnings(record) -> list[CacheWarning]:
    return [w.message for w in record if isinstance(w.message, CacheWarning)]


def test_cache_warning_is_an_accy_warning():
    assert issubclass(CacheWarning, AccyWarning) and issubclass(CacheWarning, RuntimeWarning)


def test_directories_are_created_0700_and_files_0600(tmp_path, monkeypatch):
    monkeypatch.setenv("ACCY_CACHE_DIR", str(tmp_path / "root"))
    monkeypatch.delenv("ACCY_DISABLE_DISK_CACHE", raising=False)
    old = os.umask(0)  # even with a permissive umask
    try:
        cache = ArtifactCache()
        cache.store("k", _art())
    finally:
        os.umask(old)
    assert _mode(tmp_path / "root") == 0o700
    assert _mode(tmp_path / "root" / "artifacts") == 0o700
    assert _mode(cache.path_for("k")) == 0o600
    assert cache.load("k").data == _art().data


_BAD = {
    "empty": lambda key: b"",
    "truncated": lambda key: _frame(key, b"\x90" * 100)[:60],
    "garbage": lambda key: os.urandom(200),
    "not utf-8 text": lambda key: b"\xff\xfe" * 50,
    "wrong format": lambda key: b'{"format": "accy-tuning-cache"}' + b" " * 64,
    "wrong version": lambda key: _frame(key, b"\x90" * 100, version=FORMAT_VERSION + 1),
    "bad checksum": lambda key: _frame(key, b"\x90" * 100)[:-1] + b"\x00",
    "another key": lambda key: _frame(key, b"\x90" * 100, header_key="someone-else"),
    "wrong size": lambda key: _frame(key, b"\x90" * 100, payload_len=99),
}


@pytest.mark.parametrize("kind", sorted(_BAD))
def test_an_unusable_entry_warns_once_naming_the_file_and_is_rebuilt(tmp_path, kind):
    cache = ArtifactCache(tmp_path, max_bytes=0)
    path = cache.path_for("k")
    path.write_bytes(_BAD[kind]("k"))
    os.chmod(path, 0o600)
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        assert cache.load("k") is None
        assert cache.load("k") is None  # gone: an ordinary miss, no second warning
    (w,) = _cache_warnings(record)
    assert str(path) in str(w) and w.reason == "corrupt"
    assert not path.exists() and cache.corrupt == 1
    cache.store("k", _art())  # rebuilt
    assert cache.load("k").data == _art().data


def test_a_well_framed_entry_loads(tmp_path):
    # the framing helper above is right, so the corruptions really are what they claim
    cache = ArtifactCache(tmp_path, max_bytes=0)
    cache.path_for("k").write_bytes(_frame("k", b"\x90" * 100))
    assert cache.load("k").data == b"\x90" * 100


def _planted(tmp_path) -> ArtifactCache:
    cache = ArtifactCache(tmp_path / "artifacts", max_bytes=0)
    cache.store("k", _art(b"\xcc" * 64))  # valid framing, checksum and key: "someone's code"
    return cache


@pytest.mark.parametrize("mode", [0o777, 0o775, 0o757])
def test_an_entry_in_a_group_or_world_writable_directory_is_never_loaded(tmp_path, mode):
    cache = _planted(tmp_path)
    os.chmod(cache.directory, mode)
    with pytest.warns(CacheWarning, match=r"writable by group or others") as record:
        assert cache.load("k") is None
    assert str(cache.directory) in str(record[0].message)
    cache.store("k2", _art())  # nor is anything written there
    assert not cache.path_for("k2").exists()
    os.chmod(cache.directory, 0o700)
    assert cache.load("k").data == b"\xcc" * 64


def test_a_writable_cache_root_refuses_its_subdirectories(tmp_path, monkeypatch):
    monkeypatch.setenv("ACCY_CACHE_DIR", str(tmp_path / "root"))
    monkeypatch.delenv("ACCY_DISABLE_DISK_CACHE", raising=False)
    cache = ArtifactCache()
    cache.store("k", _art())
    os.chmod(tmp_path / "root", 0o777)
    with pytest.warns(CacheWarning, match=r"root' is writable by group or others"):
        assert ArtifactCache().load("k") is None


def test_a_directory_of_another_user_is_refused(tmp_path, monkeypatch):
    cache = _planted(tmp_path)
    monkeypatch.setattr(cache_files, "owner_is_trusted", lambda uid: False)  # CI runs as root
    with pytest.warns(CacheWarning, match=r"is owned by uid \d+, not by this user"):
        assert cache.load("k") is None


def test_a_file_writable_by_others_or_a_symlink_is_dropped(tmp_path):
    cache = _planted(tmp_path)
    os.chmod(cache.path_for("k"), 0o666)
    with pytest.warns(CacheWarning, match="writable by group or others"):
        assert cache.load("k") is None
    assert not cache.path_for("k").exists()
    target = tmp_path / "elsewhere.acart"
    target.write_bytes(_frame("k", b"\x90" * 10))
    os.symlink(target, cache.path_for("k"))
    with pytest.warns(CacheWarning, match="symbolic link"):
        assert cache.load("k") is None


def test_own_and_root_owned_caches_are_trusted(monkeypatch):
    monkeypatch.setattr(cache_files, "current_uid", lambda: 1234)
    assert cache_files.owner_is_trusted(1234) and cache_files.owner_is_trusted(0)
    assert not cache_files.owner_is_trusted(1235)


def test_one_warning_per_problem_per_process(tmp_path):
    cache = _planted(tmp_path)
    os.chmod(cache.directory, 0o777)
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        for _ in range(5):
            assert cache.load("k") is None
            ArtifactCache(cache.directory).load("k")
    assert len(_cache_warnings(record)) == 1


def test_lru_eviction_keeps_the_cache_under_its_cap(tmp_path):
    entry = len(ArtifactCache._encode("k0", _art(b"\x90" * 1000)))
    cache = ArtifactCache(tmp_path, max_bytes=3 * entry)
    for i in range(3):
        cache.store(f"k{i}", _art(b"\x90" * 1000))
        os.utime(cache.path_for(f"k{i}"), ns=(10**18 + i, 10**18 + i))  # k0 oldest
    assert cache.load("k0") is not None  # a hit makes k0 the most recently used
    cache.store("k3", _art(b"\x90" * 1000))  # past the cap: down to 90 % of it
    assert not cache.path_for("k1").exists() and not cache.path_for("k2").exists()
    assert cache.path_for("k0").exists() and cache.path_for("k3").exists()
    assert cache.usage().bytes <= 3 * entry and cache.usage().entries == 2
    cache.store("huge", _art(b"\x90" * (4 * entry)))  # larger than the cap: not stored
    assert not cache.path_for("huge").exists() and cache.usage().entries == 2


def test_stores_under_the_cap_do_not_rescan_the_directory(tmp_path, monkeypatch):
    cache = ArtifactCache(tmp_path, max_bytes=10**9)
    cache.store("k0", _art())
    scans = []
    real = ArtifactCache._entries
    monkeypatch.setattr(ArtifactCache, "_entries", lambda self: scans.append(1) or real(self))
    for i in range(1, 20):
        cache.store(f"k{i}", _art())
    assert len(scans) == 0 and cache.usage().entries == 20


def test_no_cap_keeps_everything(tmp_path):
    cache = ArtifactCache(tmp_path, max_bytes=0)
    for i in range(5):
        cache.store(f"k{i}", _art())
    assert cache.usage().entries == 5


def test_stale_temporaries_are_swept(tmp_path):
    cache = ArtifactCache(tmp_path, max_bytes=10**9)
    stale = tmp_path / ".tmp-dead.acart.xyz"
    stale.write_bytes(b"half")
    os.utime(stale, (1, 1))
    cache.store("k", _art())
    assert not stale.exists()


@pytest.mark.parametrize("text, value", [
    (None, 1 << 30), ("0", 0), ("4096", 4096), ("512M", 512 << 20), ("2g", 2 << 30),
    ("64KiB", 64 << 10), ("100B", 100),
])
def test_cache_max_bytes(monkeypatch, text, value):
    if text is None:
        monkeypatch.delenv("ACCY_CACHE_MAX_BYTES", raising=False)
    else:
        monkeypatch.setenv("ACCY_CACHE_MAX_BYTES", text)
    assert config.cache_max_bytes() == value


@pytest.mark.parametrize("bad", ["-1", "1.5G", "lots", "G", "12X"])
def test_bad_cache_max_bytes_names_the_variable(monkeypatch, bad):
    monkeypatch.setenv("ACCY_CACHE_MAX_BYTES", bad)
    with pytest.raises(InputError, match=f"ACCY_CACHE_MAX_BYTES: expected a size.*{bad!r}"):
        config.cache_max_bytes()


def test_the_test_run_uses_a_temporary_cache():
    # the repository's conftest.py points every cache of the run at a private temporary dir
    from pathlib import Path

    import platformdirs

    user = Path(platformdirs.user_cache_dir("accy"))
    assert config.cache_dir() != user and user not in config.cache_dir().parents
    assert config.tuning_cache_path().parent.parent == config.cache_dir()
    assert _mode(config.cache_dir()) == 0o700


def test_an_unwritable_cache_warns_once(tmp_path):
    in_the_way = tmp_path / "cache"
    in_the_way.write_text("a file where the cache directory should be")
    cache = ArtifactCache(in_the_way, max_bytes=0)
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        for i in range(3):
            assert cache.load(f"k{i}") is None
            cache.store(f"k{i}", _art())
    (w,) = _cache_warnings(record)
    assert "is not writable" in str(w) and str(in_the_way) in str(w)


def test_a_write_is_atomic_0600_and_needs_no_tempfile(tmp_path, monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "tempfile", None)  # importing it would now fail
    target = tmp_path / "cache" / "sub" / "file.bin"
    cache_files.write_cache_file(target, b"one")
    cache_files.write_cache_file(target, b"two")  # replaced whole
    assert target.read_bytes() == b"two"
    assert stat.S_IMODE(os.stat(target).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(target.parent).st_mode) == 0o700
    assert os.listdir(target.parent) == ["file.bin"]  # no temporary left
