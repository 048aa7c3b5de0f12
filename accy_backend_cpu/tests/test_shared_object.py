"""Programs linked into shared objects: a cached one loads with dlopen (no llvmlite), a
corrupt copy on disk is replaced and never loaded, and without a linker MCJIT stays."""

from __future__ import annotations

import hashlib
import os
import shutil
import textwrap

import accy
import numpy as np
import pytest
from accy.errors import LaunchError
from accy.runtime.compiler import clear_memory_cache

from accy_backend_cpu import shared_object

needs_linker = pytest.mark.skipif(not shared_object.linker_commands(),
                                  reason="no ld or cc on PATH (apt-get install binutils)")

_PROGRAM = textwrap.dedent("""\
    module {
      func @f(%arg0: f32[64], %arg1: f32[64]) -> (f32[64]) {
        %0 = arith.mul %arg0, %arg1 : (f32[64], f32[64]) -> f32[64]
        %1 = math.exp %0 : (f32[64]) -> f32[64]
        %2 = math.sin %1 : (f32[64]) -> f32[64]
        func.return %2 : (f32[64]) -> ()
      }
    }
""")
X = np.linspace(-1, 1, 64, dtype=np.float32)
Y = np.full(64, 0.5, np.float32)
WANT = np.sin(np.exp(X * Y))


@pytest.fixture
def cache_root(tmp_path, monkeypatch):
    root = tmp_path / "cache"
    monkeypatch.setenv("ACCY_CACHE_DIR", str(root))
    monkeypatch.delenv("ACCY_DISABLE_DISK_CACHE", raising=False)
    clear_memory_cache()
    yield root
    clear_memory_cache()


def _compile():
    clear_memory_cache()  # as a new process: only the disk cache remains
    return accy.compile(accy.parse_module(_PROGRAM), backend="cpu")


def _formats(exe) -> set[str]:
    return {k.artifact.format for k in exe._loaded.values()}


@needs_linker
def test_linked_program_is_cached_and_loaded_with_dlopen(cache_root):
    exe = _compile()
    assert _formats(exe) == {"so"}
    np.testing.assert_allclose(exe(X, Y)[0], WANT, rtol=1e-5)
    (so,) = (cache_root / "artifacts").glob("*.so")
    assert so.stat().st_mode & 0o777 == 0o600
    assert so.name == hashlib.sha256(so.read_bytes()).hexdigest() + ".so"
    warm = _compile()
    assert warm.cache_stats.get("disk_hits") == 1 and _formats(warm) == {"so"}
    np.testing.assert_allclose(warm(X, Y)[0], WANT, rtol=1e-5)


@needs_linker
@pytest.mark.parametrize("damage", ["flip", "truncate", "delete"])
def test_corrupt_shared_object_on_disk_is_replaced_not_loaded(cache_root, damage):
    _compile()
    (so,) = (cache_root / "artifacts").glob("*.so")
    good = so.read_bytes()
    # damage through a new file: this process has the old one mapped, and writing into a
    # mapped library in place would change its code under it
    bad = so.with_name("bad")
    if damage == "flip":
        blob = bytearray(good)
        blob[len(blob) // 2] ^= 0xFF
        bad.write_bytes(bytes(blob))
    elif damage == "truncate":
        bad.write_bytes(good[:100])
    if damage == "delete":
        so.unlink()
    else:
        bad.chmod(0o600)
        os.replace(bad, so)
    seen = []
    real = shared_object.ctypes.CDLL

    def checked(path, *args, **kwargs):
        with open(path, "rb") as f:
            seen.append(f.read() == good)
        return real(path, *args, **kwargs)

    shared_object.ctypes.CDLL = checked
    try:
        exe = _compile()
    finally:
        shared_object.ctypes.CDLL = real
    assert seen == [True]  # only the intact bytes were ever handed to dlopen
    assert so.read_bytes() == good
    np.testing.assert_allclose(exe(X, Y)[0], WANT, rtol=1e-5)


def test_without_a_linker_programs_stay_object_code_for_mcjit(cache_root, monkeypatch):
    monkeypatch.setattr(shutil, "which", lambda name, *a, **k: None)
    assert shared_object.linker_commands() == []
    exe = _compile()
    assert _formats(exe) == {"obj"}
    assert not list((cache_root / "artifacts").glob("*.so"))
    np.testing.assert_allclose(exe(X, Y)[0], WANT, rtol=1e-5)
    assert _formats(_compile()) == {"obj"}  # and the cached object code loads into MCJIT


def test_a_failing_linker_keeps_object_code(cache_root, monkeypatch):
    monkeypatch.setattr(shared_object, "linker_commands", lambda: [["false"]])
    exe = _compile()
    assert _formats(exe) == {"obj"}
    np.testing.assert_allclose(exe(X, Y)[0], WANT, rtol=1e-5)


def test_a_shared_object_that_does_not_load_is_a_launch_error(cpu, tmp_path):
    from accy.backend import Artifact

    art = Artifact(backend="cpu", kernel_name="p", format="so", data=b"\x7fELF not really",
                   entry="", metadata={"program": True, "entries": {"k": "k"},
                                       "kernels": {"k": {}},
                                       "target_fingerprint": cpu.target.fingerprint()})
    with pytest.raises(LaunchError, match="does not load here"):
        cpu.load_program(art)


@needs_linker
def test_a_cached_program_this_host_cannot_load_is_dropped_and_rebuilt(cache_root):
    import dataclasses
    import json
    import struct
    import warnings

    from accy.errors import CacheWarning
    from accy.runtime.artifact_cache import MAGIC, ArtifactCache

    _compile()
    cache = ArtifactCache(cache_root / "artifacts")
    keys = []
    for path in (cache_root / "artifacts").glob("*.acart"):
        blob = path.read_bytes()
        (n,) = struct.unpack_from("<I", blob, len(MAGIC) + 4)
        header = json.loads(blob[len(MAGIC) + 8: len(MAGIC) + 8 + n])
        if header["format"] == "so":
            keys.append(header["key"])
    (key,) = keys
    art = cache.load(key)
    cache.store(key, dataclasses.replace(art, data=b"\x7fELF, checksummed but not loadable"))
    with pytest.warns(CacheWarning, match="cannot load"):
        exe = _compile()
    np.testing.assert_allclose(exe(X, Y)[0], WANT, rtol=1e-5)
    with warnings.catch_warnings():
        warnings.simplefilter("error", CacheWarning)  # rebuilt: loads without a warning
        np.testing.assert_allclose(_compile()(X, Y)[0], WANT, rtol=1e-5)
