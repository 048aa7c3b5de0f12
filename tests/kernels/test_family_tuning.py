"""Family tuning end to end: a cached family winner is what direct calls and compiled
programs run (recording backend and cpu), only for its shape class; ``candidate=`` wins over
it; a sweep rejects a wrong or faulting candidate and never caches it."""

from __future__ import annotations

import accy
import numpy as np
import pytest
from accy.backend.recording import RecordingBackend
from accy.families import Candidate, Family, Signature, Variant, get_family, register_family
from accy.families.lowering import decode_launches
from accy.tuning.cache import TuningCache, TuningEntry
from accy.tuning.families import family_choices, family_shape_key, space_version
from accy.tuning.family_sweep import FamilyProblem, sweep_families
from accy_kernels._dispatch import last_choice
from accy_kernels.tuning_keys import call_key

import accy_kernels

WINNER = "wg64-ipt16384"  # a radix tile of 16384 keys; the default tiles are 4096 long
X = np.random.default_rng(5).standard_normal(64).astype(np.float32)


@pytest.fixture(autouse=True)
def _private_tuning_cache(monkeypatch, tmp_path):
    monkeypatch.setenv("ACCY_TUNING_CACHE", str(tmp_path / "tuning.json"))
    # host backends space a tile launch's lanes by the pool's split (threads x 8192: 16384
    # on 2 threads, 32768 on 4), a scalar of the histogram launch like the tile length: an
    # odd split keeps the tile lengths of the candidates the only powers of two there
    from accy.families import runner

    monkeypatch.setattr(runner, "split_items", lambda backend: 6007)


def _cache_winner(device: str, family: str = "sort", shape: str = "n6",
                  choice: str = WINNER) -> None:
    fam = get_family(family)
    TuningCache().store([TuningEntry(device, f"{family}.radix",
                                     family_shape_key(space_version(fam), "f32", shape),
                                     choice, 10, 20, 3, "family", accy.__version__)])


def _chunks(launches) -> set:
    """The i32 scalars of the radix histogram launches (their tile length among them)."""
    return {v for ln in launches if "hist" in ln[0] for d, v in ln[1] if d == "i32"}


def test_recording_backend_runs_the_cached_winner_for_its_shape_class_only():
    be = RecordingBackend()
    device = be.capabilities().device_fingerprint
    accy_kernels.sort(X, backend=be)
    default = _chunks((ln[1], ln[4]) for ln in be.launches())
    assert 16384 not in default and last_choice()[3] == "default"
    _cache_winner(device)
    be.log.clear()
    got = accy_kernels.sort(X, backend=be)
    np.testing.assert_array_equal(got, np.sort(X))
    assert last_choice() == ("sort.radix", WINNER, "default", "cache")
    assert 16384 in _chunks((ln[1], ln[4]) for ln in be.launches())
    be.log.clear()
    other = np.random.default_rng(1).standard_normal(300).astype(np.float32)  # class n9
    np.testing.assert_array_equal(accy_kernels.sort(other, backend=be), np.sort(other))
    assert last_choice()[3] == "default"
    assert 16384 not in _chunks((ln[1], ln[4]) for ln in be.launches())
    be.log.clear()
    accy_kernels.sort(X, backend=be, candidate=Candidate(64, 32768))
    assert last_choice()[1:] == ("wg64-ipt32768", "default", "explicit")
    chunks = _chunks((ln[1], ln[4]) for ln in be.launches())
    assert 32768 in chunks and 16384 not in chunks


def test_cpu_direct_call_runs_the_cached_winner(monkeypatch):
    from accy.plugins import open_backend

    be = open_backend("cpu")
    seen: list = []
    real = be.launch

    def spy(loaded, geometry, buffers, scalars, *a, **k):
        seen.append(("hist" if "hist" in str(getattr(loaded, "name", loaded)) else "k",
                     tuple(scalars)))
        return real(loaded, geometry, buffers, scalars, *a, **k)

    monkeypatch.setattr(be, "launch", spy)
    accy_kernels.sort(X, backend=be)
    before = {v for _, sc in seen for d, v in sc if d == "i32"}
    _cache_winner(be.capabilities().device_fingerprint)
    seen.clear()
    np.testing.assert_array_equal(accy_kernels.sort(X, backend=be), np.sort(X))
    assert last_choice() == ("sort.radix", WINNER, "default", "cache")
    after = {v for _, sc in seen for d, v in sc if d == "i32"}
    assert 16384 in after - before


def test_compiled_program_library_sort_uses_the_cached_winner():
    b = accy.Builder()
    fb = b.begin_function("f", params=[b.tensor("f32", (64,))])
    fb.return_(fb.sort(fb.neg(fb.param(0))))
    fb.finish()
    m = b.finish()
    device = accy.compile(m, "cpu", tuning=False).backend.capabilities().device_fingerprint

    def chunks(exe):
        region = next(op for op in exe.module.functions[0].body.ops
                      if op.name == "dispatch.region" and op.attrs.get("launches"))
        return _chunks((ln[0], ln[4]) for ln in decode_launches(region.attrs["launches"]))

    assert 16384 not in chunks(accy.compile(m, "cpu"))
    _cache_winner(device)
    exe = accy.compile(m, "cpu")
    assert 16384 in chunks(exe)
    np.testing.assert_array_equal(exe(X)[0], np.sort(-X))
    assert 16384 not in chunks(accy.compile(m, "cpu", tuning=False))


def test_spmv_call_key_and_cached_variant():
    import scipy.sparse as sp

    a = sp.random(100, 100, density=0.08, format="csr", random_state=1, dtype=np.float32)
    assert a.nnz == 800  # 8 per row: bucket 3
    x = np.ones(100, np.float32)
    assert call_key("spmv", {"A": a, "x": x, "dtype": "f32"}) == ("f32", "r7-z3")
    fam = get_family("spmv")
    device = accy.compile(_trivial(), "cpu").backend.capabilities().device_fingerprint
    TuningCache().store([TuningEntry(device, "spmv",
                                     family_shape_key(space_version(fam), "f32", "r7-z3"),
                                     "ell", 10, 20, 3, "family", accy.__version__)])
    np.testing.assert_allclose(accy_kernels.spmv(a, x), a @ x, rtol=1e-5)
    assert last_choice()[0] == "spmv.ell" and last_choice()[2] == "cache"
    accy_kernels.spmv(a, x, format="csr")  # an explicit format keeps its variants
    assert last_choice()[0] == "spmv.csr_scalar"
    assert family_choices(device).variant(fam, "f32", "r7-z3").name == "ell"


def _trivial():
    b = accy.Builder()
    fb = b.begin_function("f", params=[b.tensor("f32", (4,))])
    fb.return_(fb.neg(fb.param(0)))
    fb.finish()
    return b.finish()


def _scan_run(be, cand, **kw):
    from accy_kernels.scan_reduce_then_scan import run

    if cand.option("fault"):
        raise RuntimeError("deliberate fault")
    if cand.option("wrong"):
        return np.zeros_like(kw["x"])  # fast and wrong
    return run(be, Candidate(64, cand.items_per_thread), **kw)


def test_sweep_rejects_a_wrong_and_a_faulting_candidate_and_never_caches_them(monkeypatch):
    from accy.families import registry

    monkeypatch.setattr(registry, "_LOCAL", dict(registry._LOCAL))  # restored afterwards
    cands = (Candidate(64, 0), Candidate(64, 0, (("wrong", True),)),
             Candidate(64, 0, (("fault", True),)), Candidate(64, 4096))

    def problems(name, backend, sizes=(), defaults=True):
        x = np.arange(2048, dtype=np.int32) % 7
        return [FamilyProblem(name, {"x": x, "inclusive": True, "dtype": "i32"}, "i32", "n11",
                              lambda out: None if np.array_equal(out, np.cumsum(x)) else
                              "wrong result", label="i32 n=2048")]

    register_family(Family("tuning_probe", Signature(()), "numpy:cumsum",
                           (Variant("rts", _scan_run, "scan", cands),),
                           metadata={"tuning_problems": problems}))
    ticks = iter(range(0, 10**9, 1000))
    (r,) = sweep_families("cpu", names=["tuning_probe"], warmup=0, samples=1,
                          clock=lambda: next(ticks))
    reasons = {c.label: c.rejected for c in r.rejected}
    assert set(reasons) == {cands[1].label(), cands[2].label()}
    assert "wrong result" in reasons[cands[1].label()]
    assert "deliberate fault" in reasons[cands[2].label()]
    assert all(c.measurement is not None for c in r.candidates if not c.rejected)
    chosen = {e.choice for e in TuningCache().load().values()}
    assert not chosen & set(reasons)
    assert r.winner is not None and r.winner.label not in reasons


def test_a_recorded_call_becomes_a_checked_sweep_problem():
    from accy.tuning.family_sweep import sweep_problem
    from accy_kernels._dispatch import capture_calls
    from accy_kernels.tuning_problems import problem_from_call

    x = np.arange(3000, dtype=np.int64) % 5
    with capture_calls() as calls:
        accy_kernels.scan(x)
    (p,) = [problem_from_call(c, np.cumsum(x)) for c in calls]
    assert (p.family, p.dtypes, p.shape_class) == ("scan", "i64", "n12")
    r = sweep_problem(get_family("scan"), p, accy.compile(_trivial(), "cpu").backend, warmup=0,
                      samples=1)
    assert not r.rejected and all(c.measurement is not None for c in r.candidates)
    assert r.default.label == "wg64-ipt0" and r.winner is not None


def test_compiled_random_and_scatter_add_take_the_cached_work_group_size():
    b = accy.Builder()
    fb = b.begin_function("f", params=[b.tensor("f32", (64,)), b.tensor("i32", (64,))])
    u = fb.random_uniform((64,), seed=3, offset=0)
    fb.return_(fb.scatter_add(fb.param(0), fb.param(1), u))
    fb.finish()
    m = b.finish()
    exe = accy.compile(m, "cpu")
    device = exe.backend.capabilities().device_fingerprint

    def sizes(exe):
        return {ln[0].split("_wg")[0]: ln[2] for op in exe.module.functions[0].body.ops
                if op.name == "dispatch.region" and op.attrs.get("launches")
                for ln in decode_launches(op.attrs["launches"])}

    before = sizes(exe)
    algorithm = "philox4x32-10"  # tensor.random_uniform's default
    entries = []
    for fam, var, dtypes, shape in (
            ("random", algorithm.split("-")[0], "f32", f"n6-{algorithm}-uniform"),
            ("scatter_add", "atomic", "f32+i32", "n6-d6")):
        f = get_family(fam)
        entries.append(TuningEntry(device, f"{fam}.{var}",
                                   family_shape_key(space_version(f), dtypes, shape),
                                   "wg64-ipt1", 10, 20, 3, "family", accy.__version__))
    TuningCache().store(entries)
    tuned = accy.compile(m, "cpu")
    after = sizes(tuned)
    assert before == {"random_philox4x32_10_uniform_f32": 256, "copy_f32": 256,
                      "scatter_add_f32_i32_raise_1": 256}
    assert after == {**before, "random_philox4x32_10_uniform_f32": 64,
                     "scatter_add_f32_i32_raise_1": 64}
    x = np.zeros(64, np.float32)
    idx = np.arange(64, dtype=np.int32) % 7
    np.testing.assert_allclose(tuned(x, idx)[0], exe(x, idx)[0], rtol=1e-6)
