"""Compiled programs read the tuning cache for every library op: a cached winner that differs
from the default is what a compiled contraction (``matmul``), ``scatter`` and the prefix
sums inside a sort (``scan``) run, only for its shape class, and ``tuning=False`` keeps the
default. (Sort, gather, random and atomic scatter_add: ``test_family_tuning.py``.)"""

from __future__ import annotations

import accy
import numpy as np
import pytest
from accy.families import get_family
from accy.families.lowering import decode_launches
from accy.tuning.cache import TuningCache, TuningEntry
from accy.tuning.families import family_shape_key, space_version


@pytest.fixture(autouse=True)
def _private_tuning_cache(monkeypatch, tmp_path):
    monkeypatch.setenv("ACCY_TUNING_CACHE", str(tmp_path / "tuning.json"))


def _store(device: str, family: str, kernel: str, dtypes: str, shape: str, choice: str) -> None:
    fam = get_family(family)
    TuningCache().store([TuningEntry(device, kernel,
                                     family_shape_key(space_version(fam), dtypes, shape),
                                     choice, 10, 20, 3, "family", accy.__version__)])


def _launches(exe) -> list[tuple]:
    """(kernel name, scalars) of every library/contract launch of the compiled program."""
    return [(ln[0], ln[4]) for op in exe.module.functions[0].body.ops
            if op.name == "dispatch.region" and op.attrs.get("launches")
            for ln in decode_launches(op.attrs["launches"])]


def _device() -> str:
    from accy.plugins import open_backend

    return open_backend("cpu").capabilities().device_fingerprint


def _matmul(n: int):
    b = accy.Builder()
    fb = b.begin_function("f", params=[b.tensor("f32", (n, n)), b.tensor("f32", (n, n))])
    fb.return_(fb.matmul(fb.param(0), fb.param(1)))
    fb.finish()
    return b.finish()


def test_compiled_contraction_uses_the_cached_matmul_variant_and_tile():
    tile = "wg256-ipt1-bk=16-rm=2-rn=2-tx=16-ty=16"  # 32x32 tiles, 2x2 per work-item
    assert tile in {c.label() for c in get_family("matmul").variant("tiled").candidates}
    m = _matmul(32)  # 32**3 multiply-adds: a contraction (MIN_WORK)
    names = {n for n, _ in _launches(accy.compile(m, "cpu"))}
    assert not any("tiled" in n for n in names)  # cpu default: blocked
    dev = _device()
    _store(dev, "matmul", "matmul", "f32", "m5-n5-k5-b0", "tiled")
    _store(dev, "matmul", "matmul.tiled", "f32", "m5-n5-k5-b0", tile)
    exe = accy.compile(m, "cpu")
    tiled = [n for n, _ in _launches(exe) if n.startswith("matmul_tiled")]
    assert tiled and all("32x32x16_r2x2" in n for n in tiled), tiled
    rng = np.random.default_rng(2)
    a, b = (rng.standard_normal((32, 32)).astype(np.float32) for _ in range(2))
    np.testing.assert_allclose(exe(a, b)[0], a @ b, rtol=1e-4, atol=1e-5)
    other = {n for n, _ in _launches(accy.compile(_matmul(64), "cpu"))}  # class m6-n6-k6
    assert not any("tiled" in n for n in other)
    assert not any("tiled" in n for n, _ in _launches(accy.compile(m, "cpu", tuning=False)))


def _scatter(n: int):
    b = accy.Builder()
    fb = b.begin_function("f", params=[b.tensor("f32", (n,)), b.tensor("i32", (64,)),
                                       b.tensor("f32", (64,))])
    fb.return_(fb.scatter(fb.param(0), fb.param(1), fb.param(2)))
    fb.finish()
    return b.finish()


def test_compiled_scatter_uses_the_cached_work_group_size():
    m = _scatter(64)
    assert all(n.endswith("wg256") for n, _ in _launches(accy.compile(m, "cpu"))
               if n.startswith("scatter_"))
    _store(_device(), "scatter", "scatter.last_write", "f32+i32", "n6-d6", "wg64-ipt1")
    exe = accy.compile(m, "cpu")
    sizes = {n.rsplit("_wg", 1)[1] for n, _ in _launches(exe) if n.startswith("scatter_")}
    assert sizes == {"64"}
    dst = np.zeros(64, np.float32)
    idx = (np.arange(64, dtype=np.int32) * 5) % 64
    vals = np.arange(64, dtype=np.float32)
    want = dst.copy()
    want[idx] = vals
    np.testing.assert_array_equal(exe(dst, idx, vals)[0], want)
    other = _launches(accy.compile(_scatter(128), "cpu"))  # class n6-d7
    assert all(n.endswith("wg256") for n, _ in other if n.startswith("scatter_"))


def _sort(n: int):
    b = accy.Builder()
    fb = b.begin_function("f", params=[b.tensor("f32", (n,))])
    fb.return_(fb.sort(fb.param(0)))
    fb.finish()
    return b.finish()


def _scan_chunks(exe) -> set:
    return {v for n, sc in _launches(exe) if n.startswith("scan_reduce") for d, v in sc[1:2]}


def test_prefix_sums_inside_a_compiled_sort_use_the_cached_scan_tile():
    m = _sort(64)  # one radix tile: a 256-counter scan, class n8
    default = _scan_chunks(accy.compile(m, "cpu"))
    assert default and 32768 not in default
    _store(_device(), "scan", "scan.reduce_then_scan", "i32", "n8", "wg64-ipt32768")
    exe = accy.compile(m, "cpu")
    assert _scan_chunks(exe) == {32768}
    x = np.random.default_rng(4).standard_normal(64).astype(np.float32)
    np.testing.assert_array_equal(exe(x)[0], np.sort(x))
    other = _scan_chunks(accy.compile(_sort(8192), "cpu"))  # 2 radix tiles: class n9
    assert other and 32768 not in other


def _scatter_add(dtype: str):
    b = accy.Builder()
    fb = b.begin_function("f", params=[b.tensor(dtype, (256,)), b.tensor("i32", (4096,)),
                                       b.tensor(dtype, (4096,))])
    fb.return_(fb.scatter_add(fb.param(0), fb.param(1), fb.param(2)))
    fb.finish()
    return b.finish()


def test_compiled_scatter_add_takes_the_cached_variant():
    m = _scatter_add("f32")
    assert not any("sort" in n for n, _ in _launches(accy.compile(m, "cpu")))  # atomic
    _store(_device(), "scatter_add", "scatter_add", "f32+i32", "n12-d8", "sorted")
    exe = accy.compile(m, "cpu")
    assert any("sort" in n for n, _ in _launches(exe))
    rng = np.random.default_rng(6)
    idx = rng.integers(0, 256, 4096).astype(np.int32)
    vals = rng.standard_normal(4096).astype(np.float32)
    np.testing.assert_allclose(exe(np.zeros(256, np.float32), idx, vals)[0],
                               np.bincount(idx, vals, 256), rtol=1e-4, atol=1e-4)


def test_compiled_scatter_add_privatizes_on_host_like_direct_calls():
    """A compiled scatter_add takes the direct calls' host default: private histograms
    (threads x outputs <= values), not atomics; right, with negative indices too."""
    exe = accy.compile(_scatter_add("f64"), "cpu")
    names = [n for n, _ in _launches(exe)]
    assert any(n.startswith("scatter_add_priv_hist") for n in names), names
    rng = np.random.default_rng(9)
    idx = rng.integers(-256, 256, 4096).astype(np.int32)
    vals = rng.standard_normal(4096)
    dst = rng.standard_normal(256)
    want = dst.copy()
    np.add.at(want, idx, vals)
    np.testing.assert_allclose(exe(dst, idx, vals)[0], want, rtol=1e-12, atol=1e-12)


def test_compiled_scatter_add_along_an_axis_adds_row_blocks_on_host():
    """x.at[i].add(v) into many more outputs than values (atomic) along axis 0 of [V, D]
    on the CPU: the row-block add kernel (no division per value), numpy.add.at's result."""
    rng = np.random.default_rng(10)
    dst = rng.standard_normal((512, 70)).astype(np.float32)
    idx = rng.integers(-512, 512, 40)
    vals = rng.standard_normal((40, 70)).astype(np.float32)
    f = accy.jit(lambda d, i, v: d.at[i].add(v), backend="cpu")
    names = list(f.compile(dst, idx, vals).kernels)
    assert any(n.startswith("scatter_add_rows") for n in names), names
    want = dst.copy()
    np.add.at(want, idx, vals)
    np.testing.assert_allclose(np.asarray(f(dst, idx, vals)), want, rtol=1e-6, atol=1e-6)


@pytest.mark.vulkan
def test_compiled_scatter_add_without_atomics_privatizes_on_a_lane_device():
    from accy.plugins import open_backend, probe_backend
    from accy_kernels._dispatch import has_atomic_add
    from accy_kernels.scatter_add_privatized import lane_device

    if not probe_backend("vulkan")[0]:
        pytest.skip("vulkan unavailable")
    be = open_backend("vulkan")
    if has_atomic_add(be, "f64") or not lane_device(be) or "f64" not in be.capabilities().dtypes:
        pytest.skip("not a lane device with f64 and without f64 atomics")
    exe = accy.compile(_scatter_add("f64"), "vulkan")
    names = [n for n, _ in _launches(exe)]
    assert any(n.startswith("scatter_add_priv_hist") for n in names), names
    rng = np.random.default_rng(8)
    idx = rng.integers(0, 256, 4096).astype(np.int32)
    vals = rng.standard_normal(4096)
    np.testing.assert_allclose(exe(np.ones(256), idx, vals)[0],
                               1 + np.bincount(idx, vals, 256), rtol=1e-9, atol=1e-9)


def test_an_explicit_launch_choice_wins_over_the_cached_winner():
    from accy.errors import InputError

    m = _scatter(64)
    _store(_device(), "scatter", "scatter.last_write", "f32+i32", "n6-d6", "wg64-ipt1")
    exe = accy.compile(m, "cpu", launch={"scatter.last_write": "wg128-ipt1"})
    sizes = {n.rsplit("_wg", 1)[1] for n, _ in _launches(exe) if n.startswith("scatter_")}
    assert sizes == {"128"}
    tile = "wg64-ipt1-bk=8-rm=8-rn=8-tx=8-ty=8"
    mm = accy.compile(_matmul(32), "cpu", launch={"matmul.tiled": tile})
    assert any(n.startswith("matmul_tiled_f32_64x64x8") for n, _ in _launches(mm))
    with pytest.raises(InputError, match="not one of its candidates"):
        accy.compile(m, "cpu", launch={"scatter.last_write": "wg7-ipt1"})
