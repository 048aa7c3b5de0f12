"""The pipeline cache: a program compiled by an earlier process skips the passes (the launch
graph comes from disk), gives the same results, and an undecodable entry is rebuilt."""

from __future__ import annotations

import json
import struct
import warnings

import accy
import numpy as np
import pytest
from accy.backend import Artifact
from accy.errors import CacheWarning, InternalError
from accy.runtime import fast_call
from accy.runtime.artifact_cache import MAGIC, ArtifactCache
from accy.runtime.compiler import clear_memory_cache
from accy.runtime.pipeline_cache import FORMAT, LazyKernels


def _module():
    b = accy.Builder()
    t = b.tensor("f32", (32, 4))
    fb = b.begin_function("cached", params=[t, t])
    x, y = fb.param(0), fb.param(1)
    fb.return_(fb.reduce_sum(fb.mul(x, y), axes=[1]), fb.add(fb.exp(x), y))
    fb.finish()
    return b.finish()


def _inputs():
    rng = np.random.default_rng(1)
    return [rng.standard_normal((32, 4)).astype(np.float32) for _ in range(2)]


def _graph_keys(cache: ArtifactCache) -> list[str]:
    keys = []
    for path in cache.directory.glob("*.acart"):
        blob = path.read_bytes()
        (n,) = struct.unpack_from("<I", blob, len(MAGIC) + 4)
        header = json.loads(blob[len(MAGIC) + 8 : len(MAGIC) + 8 + n])
        if header["format"] == FORMAT:
            keys.append(header["key"])
    return keys


@pytest.fixture
def fresh_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("ACCY_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("ACCY_DISABLE_DISK_CACHE", raising=False)
    clear_memory_cache()
    yield ArtifactCache()
    clear_memory_cache()


def test_second_process_skips_the_passes_with_equal_results(fresh_cache):
    first = accy.compile(_module())
    assert "pipeline_hits" not in first.cache_stats
    want = first(*_inputs())
    clear_memory_cache()  # as a new process: only the disk cache remains
    second = accy.compile(_module())
    assert second.cache_stats.get("pipeline_hits") == 1
    assert second.cache_stats.get("disk_hits") == 1  # the program's object code
    assert second._stages is None  # no pass ran
    for got, exp in zip(second(*_inputs()), want, strict=True):
        np.testing.assert_array_equal(got, exp)
    # the stages are still there on demand (run again when asked for)
    assert [p.stage for p in second.stages][-1] == "target"
    assert second.module is second.stages[-1].module


def test_undecodable_pipeline_entry_warns_once_and_rebuilds(fresh_cache):
    want = accy.compile(_module())(*_inputs())
    (key,) = _graph_keys(fresh_cache)
    fresh_cache.store(key, Artifact(backend="pipeline", kernel_name="cached", format=FORMAT,
                                    data=b"not a pickle", entry="", metadata={}))
    clear_memory_cache()
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        exe = accy.compile(_module())
    warned = [w.message for w in record if isinstance(w.message, CacheWarning)]
    assert len(warned) == 1 and "launch graph" in str(warned[0])
    assert "pipeline_hits" not in exe.cache_stats  # rebuilt by the passes
    for got, exp in zip(exe(*_inputs()), want, strict=True):
        np.testing.assert_array_equal(got, exp)
    clear_memory_cache()  # the rebuilt entry is good again
    assert accy.compile(_module()).cache_stats.get("pipeline_hits") == 1


def test_disabled_disk_cache_runs_the_passes(fresh_cache, monkeypatch):
    monkeypatch.setenv("ACCY_DISABLE_DISK_CACHE", "1")
    accy.compile(_module())
    clear_memory_cache()
    assert "pipeline_hits" not in accy.compile(_module()).cache_stats


def test_a_different_thread_count_does_not_reuse_the_graph(fresh_cache):
    """Plans size their jobs by the CPU pool's threads: a process with another count plans
    again rather than run a graph planned for the first."""
    from accy.plugins import open_backend
    from accy.runtime.pipeline_cache import pipeline_key

    be = open_backend("cpu")
    key = pipeline_key("m", "f", be, ())
    saved = be.pool.num_threads
    try:
        be.pool.num_threads = saved + 1
        assert pipeline_key("m", "f", be, ()) != key
    finally:
        be.pool.num_threads = saved
    assert pipeline_key("m", "f", be, ()) == key


def _no_compile(*args, **kwargs):
    raise AssertionError("compiled Python that the cached graph holds")


def test_cached_graph_reads_its_kernel_ir_only_when_asked(fresh_cache, monkeypatch):
    want = accy.compile(_module())(*_inputs())
    clear_memory_cache()
    # as a new process, whose small-call function must come compiled from the graph
    monkeypatch.setattr(fast_call, "_CODE", {})
    monkeypatch.setattr(fast_call, "compile", _no_compile, raising=False)
    exe = accy.compile(_module())
    kernels = exe.graph.kernels
    assert isinstance(kernels, LazyKernels) and "not loaded" in repr(kernels)
    for got, exp in zip(exe(*_inputs()), want, strict=True):  # the fast path and the
        np.testing.assert_array_equal(got, exp)                # ordinary one
    for got, exp in zip(exe._run(list(_inputs())), want, strict=True):
        np.testing.assert_array_equal(got, exp)
    assert "not loaded" in repr(kernels)  # a call needs names, counts and object code only
    assert exe.fast_function() is not fast_call.no_fast_call
    names = sorted(kernels)
    assert names and all(exe.kernels[n].name == n for n in names)  # read on demand
    assert "not loaded" not in repr(kernels)
    assert exe.graph.written_slots  # from the stored counts, equal to the kernels' own
    assert exe.graph.buffer_specs == {n: tuple((b.name, b.dtype, b.access) for b in k.buffers)
                                      for n, k in kernels.items()}


def test_undecodable_kernel_ir_warns_and_comes_from_the_stages(fresh_cache):
    accy.compile(_module())
    clear_memory_cache()
    exe = accy.compile(_module())
    kernels = exe.graph.kernels
    kernels._blob = b"not a pickle"  # as a payload the checksum missed
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        got = {n: k.fingerprint() for n, k in exe.kernels.items()}
    warned = [w.message for w in record if isinstance(w.message, CacheWarning)]
    assert len(warned) == 1 and "kernel IR" in str(warned[0])
    assert got == exe.graph.fingerprints  # the same kernels, from the stages run again
    assert not _graph_keys(fresh_cache)  # the entry was deleted
    bare = LazyKernels(("k",), b"not a pickle", "key")  # no stages to run: an accy error
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(InternalError, match="cannot be decoded"):
            bare["k"]


def test_stored_fast_call_code_is_used_only_for_its_exact_source():
    import marshal
    import sys

    source = fast_call.call_source(1, 1, [[(0, 1), (1, 0)]], True)
    other = compile("def call(args):\n    return 'stored'\n", "<test>", "exec")
    stored = (sys.version, source, marshal.dumps(other))
    fast_call._CODE.pop(source, None)
    try:
        assert fast_call._code(source, stored) == other  # exactly this source: the stored code
        fast_call._CODE.pop(source, None)
        for bad in ((sys.version, source + " ", marshal.dumps(other)),  # another source
                    ("another Python", source, marshal.dumps(other)),
                    (sys.version, source, b"not marshal data"),
                    (sys.version, source, marshal.dumps(42))):
            fast_call._CODE.pop(source, None)
            got = fast_call._code(source, bad)
            assert type(got) is type(other) and got != other  # compiled afresh
    finally:
        fast_call._CODE.pop(source, None)
