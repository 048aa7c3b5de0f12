"""Programs mixing elementwise ops and kernel-library ops (gather, scatter, scatter_add,
sort, argsort, random_uniform, segment_sum) compiled into ONE executable, on every available
backend, against numpy."""

from __future__ import annotations

import accy
import numpy as np
import pytest
from accy.errors import UnsupportedError
from accy.passes import reference_eval
from accy.passes.registry import get_pipeline, register_pipeline
from accy.testing import assert_close

RNG = np.random.default_rng(3)
X = RNG.standard_normal((16, 8)).astype(np.float32)
IDX = RNG.integers(-16, 16, 24).astype(np.int32)


def _module(params, body):
    b = accy.Builder()
    fb = b.begin_function("f", params=[b.tensor(d, s) for d, s in params])
    fb.return_(*body(fb, [fb.param(i) for i in range(len(params))]))
    fb.finish()
    return b.finish()


def _mixed(fb, p):
    x, idx = p
    e = fb.exp(x)
    g = fb.add(fb.gather(e, idx), 1.0)                        # elementwise → gather → elementwise
    sa = fb.mul(fb.scatter_add(x, idx, fb.mul(g, 0.5)), 2.0)
    srt = fb.sort(fb.neg(x))                                 # rows of the last axis
    arg = fb.argsort(x, axis=0)                              # transposed around the family
    u = fb.random_uniform((16, 8), seed=11, offset=3)
    noisy = fb.add(x, u)
    ids = fb.constant(accy.Builder.tensor("i32", (16,)), np.arange(16) % 5)
    seg = fb.segment_sum(fb.mul(x, x), ids, 5)
    sc = fb.scatter(x, idx, g, mode="raise")
    return [g, sa, srt, arg, noisy, seg, sc]


def _want(x, idx):
    e = np.exp(x)
    g = np.take(e, idx, axis=0) + 1.0
    sa = x.copy()
    np.add.at(sa, np.where(idx < 0, idx + 16, idx), g * 0.5)
    sc = x.copy()
    for j, i in enumerate(np.where(idx < 0, idx + 16, idx)):
        sc[i] = g[j]  # last position wins
    seg = np.zeros((5, 8), np.float32)
    np.add.at(seg, np.arange(16) % 5, x * x)
    return [g, sa * 2.0, np.sort(-x, axis=-1), np.argsort(x, axis=0, kind="stable"), None,
            seg, sc]


def test_mixed_program_is_one_executable(backend: str) -> None:
    m = _module([("f32", (16, 8)), ("i32", (24,))], _mixed)
    exe = accy.compile(m, backend=backend)
    got = exe(X, IDX)
    want = _want(X, IDX)
    ref = reference_eval.evaluate(m, "f", [X, IDX])
    for k, (a, w, r) in enumerate(zip(got, want, ref, strict=True)):
        if w is not None:
            np.testing.assert_allclose(a, w, rtol=1e-5, atol=1e-5, err_msg=str(k))
        np.testing.assert_allclose(a, r, rtol=1e-5, atol=1e-5, err_msg=str(k))
    u = got[4] - X
    assert u.min() >= -1e-6 and u.max() < 1.0 + 1e-6
    # the family kernels are launches of the one executable, with the map/reduce ones
    names = {ln.kernel for ln in exe.graph.launches}
    assert any(n.startswith("gather_") for n in names)
    assert any(n.startswith("radix_") for n in names)
    assert any(n.startswith("random_") for n in names)
    assert any(n.startswith("f_k") for n in names)
    # same (seed, offset): the same stream on every call
    np.testing.assert_array_equal(exe(X, IDX)[4], got[4])


@pytest.mark.parametrize("dtype", ["f32", "f64", "i32", "i64", "u32"])
def test_sort_argsort_dtypes_with_ties(backend: str, dtype: str) -> None:
    npdt = {"f32": np.float32, "f64": np.float64, "i32": np.int32, "i64": np.int64,
            "u32": np.uint32}[dtype]
    x = RNG.integers(0, 7, (5, 37)).astype(npdt)
    if dtype in ("f32", "f64"):
        x[1, 3], x[2, 5], x[0, 0] = np.nan, -np.inf, -0.0
    m = _module([(dtype, (5, 37))], lambda fb, p: [fb.sort(p[0]), fb.argsort(p[0]),
                                                   fb.argsort(p[0], axis=0),
                                                   fb.sort(p[0], descending=True)])
    s, a, a0, sd = accy.compile(m, backend=backend)(x)
    np.testing.assert_array_equal(s, np.sort(x, axis=-1, kind="stable"))
    np.testing.assert_array_equal(a, np.argsort(x, axis=-1, kind="stable"))
    np.testing.assert_array_equal(a0, np.argsort(x, axis=0, kind="stable"))
    (want_sd,) = reference_eval.evaluate(m, "f", [x])[3:]
    np.testing.assert_array_equal(sd, want_sd)


def test_gather_modes_and_axes(backend: str) -> None:
    idx = np.array([[0, -1], [7, -8]], np.int64)
    m = _module([("f32", (3, 8, 2)), ("i64", (2, 2))],
                lambda fb, p: [fb.gather(p[0], p[1], axis=1),
                               fb.gather(p[0], fb.add(p[1], 20), axis=1, mode="clip"),
                               fb.gather(p[0], fb.add(p[1], 20), axis=1, mode="wrap")])
    x = RNG.standard_normal((3, 8, 2)).astype(np.float32)
    got = accy.compile(m, backend=backend)(x, idx)
    for a, mode, ix in zip(got, ["raise", "clip", "wrap"], [idx, idx + 20, idx + 20],
                           strict=True):
        np.testing.assert_array_equal(a, np.take(x, ix, axis=1, mode=mode))


def test_out_of_range_index_raises_before_launch(backend: str) -> None:
    m = _module([("f32", (16, 8)), ("i32", (24,))],
                lambda fb, p: [fb.gather(p[0], p[1]),
                               fb.gather(p[0], fb.add(p[1], 1))])  # computed indices
    exe = accy.compile(m, backend=backend)
    bad = IDX.copy()
    bad[5] = 16
    with pytest.raises(IndexError, match="position 5"):
        exe(X, bad)
    ok = np.clip(IDX, -16, 14)
    exe(X, ok)
    computed_bad = ok.copy()
    computed_bad[7] = 15  # 15 + 1 is out of range only after the add kernel ran
    with pytest.raises(IndexError, match="position 7"):
        exe(X, computed_bad)
    seg = _module([("f32", (4,)), ("i32", (4,))], lambda fb, p: [fb.segment_sum(p[0], p[1], 2)])
    with pytest.raises(IndexError):
        accy.compile(seg, backend=backend)(np.ones(4, np.float32), np.array([0, 1, 2, 0],
                                                                            np.int32))


def test_integer_scatter_add_and_segment_sum_exact(backend: str) -> None:
    # i32: 64-bit atomics are not on every backend (Vulkan/SPIR-V here)
    dst = RNG.integers(-5, 5, (6, 3)).astype(np.int32)
    idx = np.array([0, 5, 5, 5, 2, 0], np.int32)
    vals = RNG.integers(-9, 9, (6, 3)).astype(np.int32)
    m = _module([("i32", (6, 3)), ("i32", (6,)), ("i32", (6, 3))],
                lambda fb, p: [fb.scatter_add(p[0], p[1], fb.mul(p[2], 3)),
                               fb.segment_sum(p[2], p[1], 7)])
    sa, seg = accy.compile(m, backend=backend)(dst, idx, vals)
    want = dst.copy()
    np.add.at(want, idx, vals * 3)
    np.testing.assert_array_equal(sa, want)
    wseg = np.zeros((7, 3), np.int32)
    np.add.at(wseg, idx, vals)
    np.testing.assert_array_equal(seg, wseg)


@pytest.mark.parametrize("dtype", ["f64", "i64"])
def test_wide_scatter_add_and_segment_sum_any_backend(backend: str, dtype: str) -> None:
    # f64/i64 accumulation: atomic where the backend has it, else the sorted formulation
    # (no atomics; Vulkan here) chosen by capability inside the IR plan
    npt = np.float64 if dtype == "f64" else np.int64
    rng = np.random.default_rng(11)
    dst = rng.integers(-50, 50, (4, 9, 2)).astype(npt)
    idx = rng.integers(-9, 9, 40).astype(np.int64)
    vals = rng.integers(-50, 50, (4, 40, 2)).astype(npt)
    if dtype == "f64":
        dst, vals = dst + rng.standard_normal(dst.shape), vals * 0.37
    ids = np.abs(idx) % 6
    m = _module([(dtype, (4, 9, 2)), ("i64", (40,)), (dtype, (4, 40, 2)), ("i64", (40,))],
                lambda fb, p: [fb.scatter_add(p[0], p[1], p[2], axis=1),
                               fb.segment_sum(fb.transpose(p[2], (1, 0, 2)), p[3], 7)])
    sa, seg = accy.compile(m, backend=backend)(dst, idx, vals, ids)
    want = dst.copy()
    np.add.at(want, (slice(None), np.where(idx < 0, idx + 9, idx)), vals)
    wseg = np.zeros((7, 4, 2), npt)
    np.add.at(wseg, ids, vals.transpose(1, 0, 2))
    if dtype == "f64":
        np.testing.assert_allclose(sa, want, rtol=1e-12, atol=1e-9)
        np.testing.assert_allclose(seg, wseg, rtol=1e-12, atol=1e-9)
    else:
        np.testing.assert_array_equal(sa, want)
        np.testing.assert_array_equal(seg, wseg)


def test_random_uniform_matches_family_stream(backend: str) -> None:
    from accy_kernels import random as family

    m = _module([], lambda fb, p: [fb.random_uniform((1000,), seed=2**40 + 5, offset=9),
                                   fb.random_uniform((7, 3), seed=1, dtype="f64")])
    a, b = accy.compile(m, backend=backend)()
    np.testing.assert_array_equal(a, family.uniform((1000,), 2**40 + 5, offset=9))
    np.testing.assert_array_equal(b, family.uniform((7, 3), 1, dtype="f64"))
    np.testing.assert_array_equal(a, reference_eval.evaluate(m, "f", [])[0])


@pytest.fixture
def kernel_library_disabled():
    old = get_pipeline("tensor")
    register_pipeline("tensor", old.replace("kernel-library=enabled", "kernel-library=disabled"),
                      replace=True)
    yield
    register_pipeline("tensor", old, replace=True, provider="accy-core")


def test_kernel_library_disabled_gather_is_generic(kernel_library_disabled, backend) -> None:
    m = _module([("f32", (16, 8)), ("i32", (24,))],
                lambda fb, p: [fb.mul(fb.gather(fb.exp(p[0]), p[1]), 2.0)])
    exe = accy.compile(m, backend=backend, use_cache=False)
    assert not any(op.attrs.get("kind") == "library" for op in exe.module.walk())
    assert_close(exe(X, IDX)[0], np.take(np.exp(X), IDX, axis=0) * 2.0)
    bad = IDX.copy()
    bad[3] = -17
    with pytest.raises(IndexError, match="position 3"):
        exe(X, bad)
    srt = _module([("f32", (8,))], lambda fb, p: [fb.sort(p[0])])
    with pytest.raises(UnsupportedError, match="kernel-library"):
        accy.compile(srt, backend=backend, use_cache=False)


def test_cli_ir_kernel_stage_shows_library_calls(tmp_path, capsys) -> None:
    from accy.cli.main import main

    m = _module([("f32", (16, 8)), ("i32", (24,))], _mixed)
    path = tmp_path / "mixed.accy"
    path.write_text(m.to_text())
    assert main(["ir", str(path), "--stage", "kernel"]) == 0
    out = capsys.readouterr().out
    assert 'kind = "library"' in out and "library.sort" in out and "launches = " in out
    assert "radix_hist_f32" in out and "library.random_uniform" in out
