"""``matmul.blocked`` with ``B`` packed inside the tile launch (accy_kernels.matmul_sliver)
on the CPU: odd sizes, partial panels and panel groups, several row blocks and k-blocks,
batches, a packed ``A``, the fused epilogue across k-blocks; vector code; the default plan
of an MLP layer is one launch."""

from __future__ import annotations

import re
import zlib

import numpy as np
import pytest
from accy.families import Candidate, Plan
from accy.kernel import ir

import accy_kernels as ak

from .test_matmul import DTYPES, _batched, _operand, check


def _cand(**opts) -> Candidate:
    base = {"ku": 4, "mr": 6, "nv": 2, "sliver": 1}
    base.update(opts)
    return Candidate(0, 1, tuple(sorted(base.items())))


@pytest.mark.parametrize("dtype", list(DTYPES))
@pytest.mark.parametrize("batch", ["none", "a", "b"])
def test_sliver_matches_numpy(dtype, batch):
    """Forced on: n = 70 (5 panels of 16 f32: a partial group of 4 and a partial panel),
    m = 13 (a partial row tile), k = 1 and 33; with row blocks of 2 tiles, k-blocks of 8
    and a transposed (packed) ``A``."""
    rng = np.random.default_rng(zlib.crc32(f"sliver{dtype}{batch}".encode()))
    cases = [((13, 70, 33), _cand(), False), ((13, 70, 33), _cand(mc=12, kc=8), True),
             ((7, 16, 1), _cand(ncj=2), False), ((1, 33, 20), _cand(kc=8), False)]
    for shape, cand, trans_a in cases:
        sa, sb = _batched(shape, batch)
        a = _operand(rng, dtype, sa, trans_a)
        b = _operand(rng, dtype, sb, False)
        check(ak.matmul(a, b, variant="blocked", candidate=cand), a, b, dtype)


def test_sliver_one_row_tile():
    """A single row tile (m = 4, 2: the whole product in the ``m % 6``-row tail tile) with a
    ``B`` past half of L2 (600 x 600 f32, 1.4 MB: L2s up to 2.8 MB) is copied inside the job
    launch, B row-major and transposed; equal to numpy."""
    rng = np.random.default_rng(12)
    for m, trans in [(4, False), (2, True)]:
        a = _operand(rng, "f32", (m, 600), False)
        b = _operand(rng, "f32", (600, 600), trans)
        check(ak.matmul(a, b, variant="blocked"), a, b, "f32")


def test_sliver_tail_tiles():
    """The last row tile's own, shorter register tile (m % 6 rows: 4 for m = 64, 5 for
    m = 11 with two row blocks and a packed ``A``), f32; the other sizes above end in 1-row
    tails."""
    rng = np.random.default_rng(11)
    for shape, cand, trans_a in [((64, 32, 9), _cand(), False),
                                 ((11, 20, 9), _cand(mc=6, kc=4), True)]:
        a = _operand(rng, "f32", shape[:1] + shape[2:], trans_a)
        b = _operand(rng, "f32", shape[2:0:-1], False)
        check(ak.matmul(a, b, variant="blocked", candidate=cand), a, b, "f32")


@pytest.mark.parametrize("dtype", ["f32", "f64"])  # i32: the f32 code (8 lanes)
def test_sliver_transposed_b(dtype):
    """``a @ W.T`` (``B`` with unit ``k`` stride) copied transposed inside the job launch:
    n = 70 (a partial group and panel), k = 33 (a last block of ``p`` that ends at ``k``),
    k-blocks of 16 over k = 40 (a short last k-block), a batched ``W``, two row blocks;
    k = 5 (under two vectors) keeps the separate pack. Equal to numpy, one launch each."""
    from accy.families import backend_object
    from accy_kernels.matmul_api import problem_of
    from accy_kernels.matmul_plan import plan_matmul

    be = backend_object("cpu")
    rng = np.random.default_rng(zlib.crc32(f"slt{dtype}".encode()))
    cases = [((13, 70, 33), _cand(), "none"), ((13, 70, 40), _cand(kc=16, mc=12), "b"),
             ((7, 16, 5), _cand(), "none")]
    for (m, n, k), cand, batch in cases:
        sa, sb = _batched((m, n, k), batch)
        a = _operand(rng, dtype, sa, False)
        b = _operand(rng, dtype, sb, True)
        check(ak.matmul(a, b, variant="blocked", candidate=cand), a, b, dtype)
        prob, _, _, _ = problem_of(a, b)
        plan = Plan("slt")
        plan_matmul(plan, be, prob, plan.temp(prob.dtype, 1), plan.temp(prob.dtype, 1),
                    plan.output(prob.dtype, prob.out_elems), "blocked", cand)
        names = [x[0].name for x in plan._launches]
        assert all("sliver" in x and "_bt" in x for x in names) == (k > 5), names


def _relu_bias(acc, b, i, j):
    v = ir.Binary("add", acc, ir.Load("in3", j, "f32"), "f32")
    return [], ir.Binary("max", v, ir.Const(0.0, "f32"), "f32")


def test_sliver_epilogue_after_k_blocks():
    """``relu(a @ b + bias)`` fused into the last of several k-blocks (the earlier ones
    store and add partial sums), for whole and partial tiles."""
    from accy.families import backend_object
    from accy_kernels.matmul_api import problem_of
    from accy_kernels.matmul_plan import plan_matmul
    from accy_kernels.matmul_problem import Epilogue

    be = backend_object("cpu")
    ep = Epilogue("relu_bias_sliver_test", None, (("in3", "f32"),), _relu_bias)
    rng = np.random.default_rng(5)
    for m, n, k in [(13, 70, 40), (12, 32, 20)]:
        a = rng.standard_normal((m, k)).astype(np.float32)
        b = rng.standard_normal((k, n)).astype(np.float32)
        bias = rng.standard_normal(n).astype(np.float32)
        prob, abase, bbase, _ = problem_of(a, b)
        plan = Plan("sliver-epilogue")
        sa, sb, sbias = (plan.param(x, "f32") for x in (abase, bbase, bias))
        out = plan.output("f32", m * n)
        plan_matmul(plan, be, prob, sa, sb, out, "blocked", _cand(kc=8), ep, [sbias])
        names = [launch[0].name for launch in plan._launches]
        assert len(names) > 1 and all("sliver" in x for x in names), names
        (got,) = plan.run(be)
        want = np.maximum(a.astype(np.float64) @ b + bias, 0.0)
        np.testing.assert_allclose(got.reshape(m, n), want, rtol=1e-4, atol=1e-4)


def test_sliver_kernel_is_vector_code():
    """The job kernel's FMAs are vector FMAs: an index clamped with ``min`` inside a loop
    (its partial-tile stores with an epilogue sit inside the row-tile loop) would turn the
    loop vectorizer off for the whole kernel (it ran 10x slower, scalar)."""
    from accy.plugins import open_backend
    from accy_kernels.matmul_host import simd_lanes
    from accy_kernels.matmul_problem import Epilogue
    from accy_kernels.matmul_sliver import sliver_kernel

    be = open_backend("cpu")
    lanes = simd_lanes(be, "f32")
    ep = Epilogue("relu_bias_sliver_test", None, (("in3", "f32"),), _relu_bias)
    text = be.emit(sliver_kernel("f32", 6, lanes, 2, 4, 4, False, ep, True), "llvm-opt").decode()
    # vector FMAs of any width (a host preferring 256-bit vectors splits 16 lanes in two)
    widths = {int(w) for w in re.findall(r"llvm\.fmuladd\.v(\d+)f32", text)}
    assert widths and min(widths) >= 4, widths


def test_mlp_layer_default_is_one_launch():
    """The MLP layer's shapes (64 and 256 rows, 1024 x 1024 weights; 4 rows, one row tile
    whose ``W`` is past half of L2) plan one job launch: no separate pack of ``W``; a
    product that would read a small ``B`` in place keeps doing so."""
    from accy.families import backend_object
    from accy_kernels.matmul_plan import plan_matmul
    from accy_kernels.matmul_problem import MatmulProblem

    be = backend_object("cpu")
    for m, n, k in [(64, 1024, 1024), (256, 1024, 1024), (256, 256, 256), (4, 1024, 1024)]:
        prob = MatmulProblem("f32", 1, m, n, k, (0, k, 1), (0, n, 1))
        plan = Plan("mlp")
        sa, sb = plan.temp("f32", m * k), plan.temp("f32", k * n)
        plan_matmul(plan, be, prob, sa, sb, plan.output("f32", m * n))
        assert [x[0].name.split("_")[1] for x in plan._launches] == ["sliver"], m
    tall = MatmulProblem("f32", 1, 4096, 64, 64, (0, 64, 1), (0, 64, 1))
    plan = Plan("tall")
    plan_matmul(plan, be, tall, plan.temp("f32", 1), plan.temp("f32", 1),
                plan.output("f32", 4096 * 64))
    assert [x[0].name.split("_")[1] for x in plan._launches] == ["blocked"]


def test_sliver_spread_over_threads():
    """A product big enough to spread over a 3-thread pool (idle groups between the jobs,
    their power-of-two stride tested with a mask; 3 uneven ranges): 19 panels in groups
    of 4 (the last of 3), 2 row blocks: 10 jobs; equal to numpy."""
    from accy_backend_cpu.backend import CpuBackend

    be = CpuBackend(num_threads=3)
    try:
        rng = np.random.default_rng(9)
        a = rng.standard_normal((70, 300)).astype(np.float32)
        b = rng.standard_normal((300, 300)).astype(np.float32)
        check(ak.matmul(a, b, backend=be, variant="blocked", candidate=_cand(mc=36)), a, b,
              "f32")
    finally:
        be.close()


def test_col_groups_per_job():
    """Jobs take runs of column groups (one scratch slot each) without making the busiest
    of the pool's ranges run more groups than one group per job would: 16 groups over 2
    ranges are 2 jobs of 8; over 3 ranges 3 of 6 (6, 6, 4); one range takes a whole row
    block; more ranges than groups keep one group per job."""
    from accy_kernels.matmul_sliver import col_groups

    assert col_groups(16, 1, 2) == 8
    assert col_groups(16, 1, 3) == 6
    assert col_groups(16, 1, 1) == 16
    assert col_groups(16, 2, 2) == 16
    assert col_groups(16, 1, 16) == 1
    assert col_groups(5, 2, 3) == 2
    assert col_groups(1, 4, 2) == 1
