"""Protocol behaviour of the CPU backend: errors, memory, emit, plugin, artifact cache."""

from __future__ import annotations

import numpy as np
import pytest
from accy.backend import Geometry
from accy.codegen import CodegenRequest, compile_llvm
from accy.errors import CacheWarning, CodegenError, LaunchError, UnsupportedError
from accy.kernel import KernelBuilder
from accy.runtime.artifact_cache import ArtifactCache

from accy_backend_cpu import plugin


def copy_kernel(name="copy", ws=32):
    kb = KernelBuilder(name, ws)
    o, x = kb.buffer("o", "f32", "write"), kb.buffer("x", "f32", "read")
    n = kb.scalar("n", "i32")
    i = kb.global_id()
    with kb.if_(i < n):
        kb.store(o, i, x[i] + 1.0)
    return kb.build()


def test_launch_validates_arguments(cpu):
    loaded = cpu.load(cpu.compile(copy_kernel()))
    a, b = cpu.allocate(128), cpu.allocate(128)
    with pytest.raises(LaunchError, match="expected 2 buffers"):
        cpu.launch(loaded, Geometry(1, 32), [a], [("i32", 32)])
    with pytest.raises(LaunchError, match="scalar 'n' must be i32"):
        cpu.launch(loaded, Geometry(1, 32), [a, b], [("f32", 32.0)])
    with pytest.raises(LaunchError, match="workgroup_size 64"):
        cpu.launch(loaded, Geometry(1, 64), [a, b], [("i32", 32)])
    with pytest.raises(LaunchError, match="written buffer .* overlaps"):
        cpu.launch(loaded, Geometry(1, 32), [a, a], [("i32", 32)])


def test_aliasing_allowed_without_noalias(cpu):
    loaded = cpu.load(cpu.compile(copy_kernel("inplace"), {"noalias": False}))
    x = np.arange(40, dtype=np.float32)
    buf = cpu.import_host(x)
    cpu.launch(loaded, Geometry(2, 32), [buf, buf], [("i32", 40)])
    np.testing.assert_array_equal(x, np.arange(40) + 1)  # zero-copy: x itself changed


def test_memory_operations(cpu):
    buf = cpu.allocate(64)
    assert buf.ctypes.data % 64 == 0
    cpu.fill(buf, 0)
    cpu.write(buf, np.arange(4, dtype=np.int32))
    view = cpu.host_view(buf, "i32", (4, 4))
    assert view[0].tolist() == [0, 1, 2, 3] and view[1].tolist() == [0, 0, 0, 0]
    other = cpu.allocate(64)
    cpu.copy(buf, other, 16)
    assert cpu.read(other, np.empty(4, np.int32)).tolist() == [0, 1, 2, 3]
    assert cpu.import_host(np.zeros((4, 4))[:, ::2]) is None


def test_emit_formats(cpu):
    k = copy_kernel()
    assert b"define void @copy" in cpu.emit(k, "llvm")
    assert b"copy" in cpu.emit(k, "asm")
    assert cpu.emit(k, "obj")[:4] in (b"\x7fELF", b"\xcf\xfa\xed\xfe", b"d\x86\x00\x00")
    with pytest.raises(UnsupportedError, match="unknown format"):
        cpu.emit(k, "ptx")


def test_worker_survives_bad_ir_then_compiles(cpu):
    with pytest.raises(CodegenError):
        compile_llvm(CodegenRequest("define i32 @f() { ret void }", cpu.target.triple))
    with pytest.raises(CodegenError, match="LLVM ERROR"):
        compile_llvm(CodegenRequest("", cpu.target.triple, abort_for_testing=True))
    assert cpu.compile(copy_kernel("after_crash")).data


def test_capabilities_and_plugin(cpu):
    caps = cpu.capabilities()
    assert caps.dtypes == {"f32", "f64", "i32", "i64", "u32", "bool", "i8", "u8", "i16", "u16", "u64"}
    assert "host_memory" in caps.features and len(caps.device_fingerprint) == 64
    (descriptor,) = plugin.accy_backends()
    assert descriptor.name == "cpu" and descriptor.probe().available


def test_artifact_cache_round_trip_and_corruption(cpu, tmp_path):
    cache = ArtifactCache(tmp_path)
    artifact = cpu.compile(copy_kernel("cached"))
    assert cache.load("k1") is None and cache.misses == 1
    cache.store("k1", artifact)
    again = cache.load("k1")
    assert again.data == artifact.data and again.metadata == artifact.metadata
    assert cache.hits == 1
    x = np.arange(32, dtype=np.float32)
    out = cpu.allocate(128)
    cpu.launch(cpu.load(again), Geometry(1, 32), [out, cpu.import_host(x)], [("i32", 32)])
    np.testing.assert_array_equal(cpu.host_view(out, "f32", (32,)), x + 1)

    path = cache.path_for("k1")
    blob = bytearray(path.read_bytes())
    blob[len(blob) // 2] ^= 0xFF
    path.write_bytes(bytes(blob))
    with pytest.warns(CacheWarning, match="bad checksum"):
        assert cache.load("k1") is None and cache.corrupt == 1 and not path.exists()
    cache.store("k2", artifact)
    cache.path_for("k2").write_bytes(cache.path_for("k2").read_bytes()[:40])  # truncated
    with pytest.warns(CacheWarning, match="is truncated"):
        assert cache.load("k2") is None and cache.corrupt == 2


def test_disabled_cache(monkeypatch):
    monkeypatch.setenv("ACCY_DISABLE_DISK_CACHE", "1")
    cache = ArtifactCache()
    assert not cache.enabled and cache.load("x") is None


def test_a_pool_shut_down_by_another_thread_runs_the_launch_on_the_caller():
    # backend.close() in one thread while another launches: submit() raised RuntimeError
    # ("cannot schedule new futures after shutdown") out of the launch
    from concurrent.futures import ThreadPoolExecutor

    from accy_backend_cpu.threadpool import WorkgroupPool, split_range

    pool = WorkgroupPool(4, min_items_per_thread=1)
    dead = ThreadPoolExecutor(1)
    dead.shutdown()
    pool._pool = lambda: dead
    seen: list[tuple[int, int]] = []
    pool.run(lambda b, e: seen.append((b, e)), 8, 1)
    assert sorted(seen) == split_range(8, 4 * pool.ranges_per_thread)  # every range, here
