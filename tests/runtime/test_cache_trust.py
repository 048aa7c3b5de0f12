"""End to end on the CPU backend: an artifact planted in the cache is executed only from a
private directory; unusable artifact and tuning files cost one warning, never an error."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import warnings

import accy
import numpy as np
import pytest
from accy.errors import CacheWarning
from accy.runtime import cache_files
from accy.runtime.artifact_cache import MAGIC, ArtifactCache
from accy.runtime.compiler import clear_memory_cache

_PROGRAM = textwrap.dedent("""\
    module {{
      func @f(%arg0: f32[64], %arg1: f32[64]) -> (f32[64]) {{
        %0 = arith.{op} %arg0, %arg1 : (f32[64], f32[64]) -> f32[64]
        func.return %0 : (f32[64]) -> ()
      }}
    }}
""")
X = np.arange(64, dtype=np.float32)
Y = np.full(64, 3.0, np.float32)


def _compile(op: str):
    clear_memory_cache()
    return accy.compile(accy.parse_module(_PROGRAM.format(op=op)), backend="cpu")


def _entries(directory) -> dict[str, str]:
    """object-code key → entry file, read from each entry's header (the launch graphs of
    the pipeline cache, stored alongside, are left out)."""
    out = {}
    for path in directory.glob("*.acart"):
        blob = path.read_bytes()
        (n,) = np.frombuffer(blob[len(MAGIC) + 4: len(MAGIC) + 8], "<u4")
        header = json.loads(blob[len(MAGIC) + 8: len(MAGIC) + 8 + int(n)])
        if header["format"] != "launch-graph":
            out[header["key"]] = path
    return out


@pytest.fixture
def cache_root(tmp_path, monkeypatch):
    root = tmp_path / "cache"
    monkeypatch.setenv("ACCY_CACHE_DIR", str(root))
    monkeypatch.delenv("ACCY_DISABLE_DISK_CACHE", raising=False)
    monkeypatch.setenv("ACCY_TUNING_CACHE", str(root / "tuning" / "tuning.json"))
    yield root
    clear_memory_cache()


def _plant(cache_root, tmp_path, monkeypatch):
    """Put the code of ``x - y`` at the exact key path of ``x * y``, with valid framing."""
    _compile("mul")
    (mul_key,) = _entries(cache_root / "artifacts")
    other = tmp_path / "other"
    monkeypatch.setenv("ACCY_CACHE_DIR", str(other))
    _compile("sub")
    (sub_key,) = _entries(other / "artifacts")
    sub_art = ArtifactCache(other / "artifacts").load(sub_key)
    monkeypatch.setenv("ACCY_CACHE_DIR", str(cache_root))
    ArtifactCache(cache_root / "artifacts").store(mul_key, sub_art)
    return mul_key


def test_planted_artifact_runs_only_from_a_private_directory(cache_root, tmp_path, monkeypatch):
    _plant(cache_root, tmp_path, monkeypatch)
    # sanity: from a private directory the planted code is what runs (so the test can fail)
    np.testing.assert_array_equal(_compile("mul")(X, Y)[0], X - Y)
    os.chmod(cache_root / "artifacts", 0o777)
    with pytest.warns(CacheWarning, match="writable by group or others") as record:
        exe = _compile("mul")
    assert any(str(cache_root / "artifacts") in str(w.message) for w in record)
    np.testing.assert_array_equal(exe(X, Y)[0], X * Y)
    assert exe.cache_stats.get("disk_hits", 0) == 0


def test_planted_artifact_in_a_directory_of_another_user_is_not_run(cache_root, tmp_path,
                                                                       monkeypatch):
    _plant(cache_root, tmp_path, monkeypatch)
    monkeypatch.setattr(cache_files, "owner_is_trusted", lambda uid: False)  # CI runs as root
    with pytest.warns(CacheWarning, match=r"owned by uid \d+, not by this user"):
        exe = _compile("mul")
    np.testing.assert_array_equal(exe(X, Y)[0], X * Y)


def test_planted_artifact_with_a_wrong_checksum_is_dropped(cache_root, tmp_path, monkeypatch):
    key = _plant(cache_root, tmp_path, monkeypatch)
    path = _entries(cache_root / "artifacts")[key]
    blob = bytearray(path.read_bytes())
    blob[-1] ^= 0x01
    path.write_bytes(bytes(blob))
    with pytest.warns(CacheWarning, match="bad checksum") as record:
        exe = _compile("mul")
    assert sum(isinstance(w.message, CacheWarning) for w in record) == 1
    assert str(path) in str(record[0].message)
    np.testing.assert_array_equal(exe(X, Y)[0], X * Y)
    with warnings.catch_warnings():
        warnings.simplefilter("error", CacheWarning)  # rebuilt: no warning the second time
        np.testing.assert_array_equal(_compile("mul")(X, Y)[0], X * Y)


def test_compiled_cache_is_private(cache_root):
    _compile("add")
    for d in (cache_root, cache_root / "artifacts"):
        assert os.stat(d).st_mode & 0o777 == 0o700
    (path,) = _entries(cache_root / "artifacts").values()
    assert os.stat(path).st_mode & 0o777 == 0o600


def test_size_cap_bounds_the_artifact_cache(cache_root, monkeypatch):
    _compile("add")
    (path,) = _entries(cache_root / "artifacts").values()
    size = path.stat().st_size
    monkeypatch.setenv("ACCY_CACHE_MAX_BYTES", str(2 * size + size // 2))
    for op in ("sub", "mul", "max", "min"):
        _compile(op)
        usage = ArtifactCache(cache_root / "artifacts").usage()
        assert usage.bytes <= 2 * size + size // 2 and usage.entries <= 2


_TUNING_BAD = {
    "invalid utf-8": b'{"format": "accy-tuning-cache", "version": 1, "entries": {"\xff\xfe": 1}}',
    "empty": b"",
    "truncated": b'{"format": "accy-tuning-cache", "version": 1, "entr',
    "wrong version": b'{"format": "accy-tuning-cache", "version": 99, "entries": {}}',
    "wrong format": b'{"format": "something-else", "version": 1}',
    "not an object": b"[1, 2, 3]",
    "malformed entry": b'{"format": "accy-tuning-cache", "version": 1, "entries": {"a|b|c": '
                       b'{"device": "a", "kernel": "b", "shape_family": "c", "choice": 7}}}',
    "deeply nested": b"[" * 100000,
}


@pytest.mark.parametrize("kind", sorted(_TUNING_BAD))
def test_unusable_tuning_cache_warns_once_and_compile_and_jit_work(cache_root, kind):
    path = cache_root / "tuning" / "tuning.json"
    path.parent.mkdir(parents=True, mode=0o700)
    path.write_bytes(_TUNING_BAD[kind])
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        np.testing.assert_array_equal(_compile("add")(X, Y)[0], X + Y)
        np.testing.assert_array_equal(_compile("sub")(X, Y)[0], X - Y)
        jitted = accy.jit(lambda a, b: a * b, backend="cpu")
        np.testing.assert_array_equal(jitted(X, Y), X * Y)
    found = [w.message for w in record if isinstance(w.message, CacheWarning)]
    assert len(found) == 1 and str(path) in str(found[0]), [str(w) for w in found]


def test_accy_tune_rebuilds_an_unusable_tuning_cache(cache_root, tmp_path):
    path = cache_root / "tuning" / "tuning.json"
    path.parent.mkdir(parents=True, mode=0o700)
    path.write_bytes(b"\xff\xfe not json")
    program = tmp_path / "p.accy"
    program.write_text(_PROGRAM.format(op="add"))
    env = dict(os.environ)
    out = subprocess.run([sys.executable, "-m", "accy", "tune", str(program), "--samples", "1",
                          "--warmup", "0", "--no-progress"], env=env, capture_output=True,
                         text=True, timeout=600, check=False)
    assert out.returncode == 0, out.stderr
    assert "CacheWarning" in out.stderr and str(path) in out.stderr
    doc = json.loads(path.read_text())
    assert doc["format"] == "accy-tuning-cache" and doc["entries"]
    assert os.stat(path).st_mode & 0o777 == 0o600
