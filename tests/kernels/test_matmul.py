"""matmul family (blocked, tiled, gemv) vs numpy: dtypes, transposed and batched operands,
odd sizes, empty dimensions, K = 1; integers exact, floats within a K-dependent bound."""

from __future__ import annotations

import zlib

import numpy as np
import pytest
from accy.errors import InputError, UnsupportedError
from accy.families import Candidate

import accy_kernels as ak

DTYPES = {"f32": np.float32, "f64": np.float64, "i32": np.int32}
EPS = {"f32": np.finfo(np.float32).eps, "f64": np.finfo(np.float64).eps}
#: (m, n, k): odd and prime sizes, K = 1, a single row/column
SHAPES = [(1, 1, 1), (7, 31, 33), (33, 7, 127), (31, 33, 1), (2, 257, 7)]
BIG = [(257, 127, 31), (127, 1000, 33)]


def _operand(rng, dtype, shape, transpose):
    """A random operand of ``shape``; ``transpose``: a transposed view of the other layout."""
    full = shape[:-2] + (shape[-1], shape[-2]) if transpose else shape
    if dtype == "i32":
        x = rng.integers(-50, 50, full).astype(np.int32)
    else:
        x = rng.standard_normal(full).astype(DTYPES[dtype])
    return np.swapaxes(x, -1, -2) if transpose else x


def check(c, a, b, dtype):
    """``c`` equals ``a @ b``: exactly for integers, else within ``4 k eps (|a| @ |b|)``."""
    ref = np.matmul(a.astype(np.float64), b.astype(np.float64))
    assert c.shape == ref.shape and c.dtype == DTYPES[dtype]
    if dtype == "i32":
        np.testing.assert_array_equal(c, np.matmul(a, b))
        return
    k = a.shape[-1]
    bound = 4 * max(k, 1) * EPS[dtype] * np.matmul(np.abs(a).astype(np.float64),
                                                   np.abs(b).astype(np.float64))
    assert np.all(np.abs(c - ref) <= bound + 1e-30), np.abs(c - ref).max()


def _batched(shape, batch):
    m, n, k = shape
    if batch == "none":
        return (m, k), (k, n)
    if batch == "both":
        return (3, m, k), (3, k, n)
    if batch == "a":  # B shared by every batch (stride 0)
        return (3, m, k), (k, n)
    return (m, k), (3, k, n)


@pytest.mark.parametrize("variant", ["blocked", "tiled"])
@pytest.mark.parametrize("dtype", list(DTYPES))
@pytest.mark.parametrize("trans", ["nn", "tn", "nt", "tt"])
@pytest.mark.parametrize("batch", ["none", "both", "a", "b"])
def test_matmul_variants(backend, variant, dtype, trans, batch):
    rng = np.random.default_rng(zlib.crc32(f"{variant}{dtype}{trans}{batch}".encode()))
    shapes = SHAPES[:3] if backend != "cpu" else SHAPES
    for shape in shapes:
        sa, sb = _batched(shape, batch)
        a = _operand(rng, dtype, sa, trans[0] == "t")
        b = _operand(rng, dtype, sb, trans[1] == "t")
        check(ak.matmul(a, b, backend=backend, variant=variant), a, b, dtype)


@pytest.mark.parametrize("dtype", list(DTYPES))
@pytest.mark.parametrize("shape", [(1, 1), (7, 33), (257, 31), (31, 1000)])
def test_matmul_gemv(backend, dtype, shape):
    """Matrix-vector in both forms: ``A @ x`` (rows), ``A.T @ x`` and ``x @ A`` (cols)."""
    rng = np.random.default_rng(5)
    m, k = shape
    a = _operand(rng, dtype, (m, k), False)
    x = _operand(rng, dtype, (k, 1), False)[:, 0]
    xm = _operand(rng, dtype, (m, 1), False)[:, 0]
    for va, vb in ((a, x), (a.T, xm), (xm, a), (np.stack([a, a]), x), (a, x[:, None])):
        check(ak.matmul(va, vb, backend=backend, variant="gemv"), va, vb, dtype)
        check(ak.matmul(va, vb, backend=backend), va, vb, dtype)


def test_gemv_cols_rows_per_work_item():
    """``x @ A`` (cols form) on the CPU with 2 and 4 rows per work-item (``m`` = 50, 100:
    a last block shifted back to end at ``m``) and 1 (``m`` = 20), f32 and f64."""
    rng = np.random.default_rng(9)
    for dtype in ("f32", "f64"):
        for n in (50, 100, 20):
            a = _operand(rng, dtype, (37, n), False)
            x = _operand(rng, dtype, (37, 1), False)[:, 0]
            check(ak.matmul(x, a, variant="gemv"), x, a, dtype)


@pytest.mark.parametrize("variant", ["blocked", "tiled", None])
def test_matmul_big(backend, variant):
    if backend != "cpu" and variant == "tiled":
        pytest.skip("the large tiled case runs on the cpu backend only (lavapipe is slow)")
    rng = np.random.default_rng(7)
    for m, n, k in (BIG if backend == "cpu" else BIG[:1]):
        a = _operand(rng, "f32", (m, k), False)
        b = _operand(rng, "f32", (k, n), True)
        check(ak.matmul(a, b, backend=backend, variant=variant), a, b, "f32")


@pytest.mark.parametrize("variant", ["blocked", "tiled", None])
@pytest.mark.parametrize("shape", [(0, 5, 3), (4, 0, 3), (4, 5, 0), (0, 0, 0)])
def test_matmul_empty(backend, variant, shape):
    m, n, k = shape
    a, b = np.ones((m, k), np.float32), np.ones((k, n), np.float32)
    c = ak.matmul(a, b, backend=backend, variant=variant)
    assert c.shape == (m, n)
    np.testing.assert_array_equal(c, np.zeros((m, n), np.float32))
    assert ak.matmul(np.ones((0, 2, 3)), np.ones((0, 3, 4)), backend=backend).shape == (0, 2, 4)


def test_matmul_int_wraps_like_numpy():
    a = np.full((3, 40), 2**20, np.int32)
    b = np.full((40, 2), 2**12, np.int32)
    np.testing.assert_array_equal(ak.matmul(a, b), np.matmul(a, b))


def test_matmul_1d_shapes():
    x, a = np.arange(3.0), np.ones((3, 4))
    assert ak.matmul(x, a).shape == (4,) and ak.matmul(a.T, x).shape == (4,)
    assert ak.matmul(x, x).shape == () and float(ak.matmul(x, x)) == 5.0


def test_matmul_errors():
    with pytest.raises(InputError, match="contracted"):
        ak.matmul(np.ones((2, 3)), np.ones((4, 2)))
    with pytest.raises(InputError, match="batch"):
        ak.matmul(np.ones((2, 2, 3)), np.ones((3, 3, 2)))
    with pytest.raises(UnsupportedError, match="dtype"):
        ak.matmul(np.ones((2, 2), np.complex64), np.ones((2, 2), np.complex64))
    with pytest.raises(InputError, match="unknown variant"):
        ak.matmul(np.ones((2, 2)), np.ones((2, 2)), variant="strassen")
    with pytest.raises(UnsupportedError, match="gemv"):
        ak.matmul(np.ones((2, 2)), np.ones((2, 2)), variant="gemv")
    with pytest.raises(InputError, match="dimensions"):
        ak.matmul(np.ones((2, 2, 2, 2)), np.ones((2, 2)))


def test_matmul_reads_views_without_copy():
    from accy_kernels.matmul_problem import operand_view

    base = np.arange(24.0).reshape(4, 6)
    flat, strides, off = operand_view(base.T)
    assert flat.base is base or np.shares_memory(flat, base)
    assert strides == (1, 6) and off == 0
    flat, strides, off = operand_view(base[1:, 2:5])
    assert np.shares_memory(flat, base) and off == 8 and strides == (6, 1)


#: tiny cache blocks: several k-blocks (accumulating launches), partial MC / NC blocks
KBLOCKS = Candidate(0, 1, (("kc", 8), ("ku", 4), ("mc", 12), ("mr", 6), ("nc", 32), ("nv", 2)))


@pytest.mark.parametrize("dtype", list(DTYPES))
@pytest.mark.parametrize("trans", ["nn", "tn", "nt"])
@pytest.mark.parametrize("batch", ["both", "a"])
def test_matmul_blocked_k_blocks(dtype, trans, batch):
    """Cache-blocked ``blocked`` on the CPU: k cut into blocks of 8, or into MAX_K_BLOCKS
    (k = 1, 20, 33, 127), each with its own B pack; 2-tile row and column blocks (7 row
    tiles and 5 column tiles leave partial ones)."""
    rng = np.random.default_rng(zlib.crc32(f"kb{dtype}{trans}{batch}".encode()))
    for shape in [(7, 31, 33), (33, 7, 127), (31, 33, 1), (41, 70, 20)]:
        sa, sb = _batched(shape, batch)
        a = _operand(rng, dtype, sa, trans[0] == "t")
        b = _operand(rng, dtype, sb, trans[1] == "t")
        check(ak.matmul(a, b, variant="blocked", candidate=KBLOCKS), a, b, dtype)


def test_host_caches_sysfs_and_env(tmp_path, monkeypatch):
    from accy_kernels.host_caches import DEFAULT_CACHES, host_caches, parse_size

    for i, (level, kind, size) in enumerate([(1, "Data", "48K"), (1, "Instruction", "32K"),
                                             (2, "Unified", "2048K"), (3, "Unified", "")]):
        d = tmp_path / f"index{i}"
        d.mkdir()
        for name, text in (("level", str(level)), ("type", kind), ("size", size)):
            (d / name).write_text(text + "\n")
    assert host_caches(str(tmp_path)) == (48 << 10, 2 << 20, DEFAULT_CACHES[2])
    assert host_caches(str(tmp_path / "missing")) == DEFAULT_CACHES
    assert parse_size("1M") == 1 << 20
    with pytest.raises(InputError):
        parse_size("big")
    monkeypatch.setenv("ACCY_HOST_CACHES", "1,2")
    host_caches.cache_clear()
    try:
        with pytest.raises(InputError, match="ACCY_HOST_CACHES"):
            host_caches()
    finally:
        monkeypatch.delenv("ACCY_HOST_CACHES")
        host_caches.cache_clear()


@pytest.mark.parametrize("dtype", list(DTYPES))
@pytest.mark.parametrize("trans", ["nn", "tt"])
def test_matmul_split_k(dtype, trans):
    """Split-K on the CPU: forced slice counts (more slices than k, uneven last slice, a
    slice per element) and the default for a 1-tile output with a long k."""
    rng = np.random.default_rng(zlib.crc32(f"sk{dtype}{trans}".encode()))
    for (m, n, k), splits in [((7, 33, 31), 3), ((13, 47, 127), 4), ((1, 1, 7), 9),
                              ((5, 3, 2500), 0)]:
        a = _operand(rng, dtype, (m, k), trans[0] == "t")
        b = _operand(rng, dtype, (k, n), trans[1] == "t")
        cand = Candidate(0, 1, (("ku", 4), ("mr", 6), ("nv", 2), ("splits", splits)))
        check(ak.matmul(a, b, variant="blocked", candidate=cand), a, b, dtype)


def test_split_k_choice():
    from accy_kernels.matmul_problem import MatmulProblem
    from accy_kernels.matmul_splitk import splits_for

    def prob(m, n, k, batch=1):
        return MatmulProblem("f32", batch, m, n, k, (0, k, 1), (0, n, 1))

    none = Candidate(0, 1, ())
    assert splits_for(prob(64, 64, 65536), 44, 2, none) == 1  # 44 tiles fill 2 threads
    assert splits_for(prob(64, 64, 65536), 44, 64, none) == 3
    assert splits_for(prob(6, 16, 1 << 20), 1, 8, none) == 16
    assert splits_for(prob(6, 16, 1500), 1, 8, none) == 1  # slices under MIN_SLICE
    assert splits_for(prob(6, 16, 1 << 20, batch=2), 2, 8, none) == 1



@pytest.mark.parametrize("dtype", list(DTYPES))
@pytest.mark.parametrize("batch", ["none", "both"])
def test_matmul_grouped_pack(dtype, batch):
    """``B`` packed on the CPU: row-major in slabs of 8 rows (k = 7, 33, 5, 1: a partial
    last slab; 17-20 panels: a partial last one), per batch, under M = 31, 7, 1, 127; a
    ``B`` with no unit stride in 8-panel groups (19 panels: a partial last group)."""
    rng = np.random.default_rng(zlib.crc32(f"gp{dtype}{batch}".encode()))
    for m, n, k in [(31, 257, 7), (7, 320, 33), (1, 300, 5), (127, 263, 1)]:
        sa, sb = _batched((m, n, k), batch)
        a = _operand(rng, dtype, sa, False)
        b = _operand(rng, dtype, sb, False)
        check(ak.matmul(a, b, variant="blocked"), a, b, dtype)
    big = _operand(rng, dtype, (66, 3 * 300), False)
    b = big[::2, ::3]  # strides (2*900, 3): packed through both run-time strides
    a = _operand(rng, dtype, (9, 33), False)
    check(ak.matmul(a, b, variant="blocked"), a, b, dtype)


@pytest.mark.parametrize("dtype", list(DTYPES))
def test_transposed_b_pack(dtype):
    """``x @ W.T`` (``B`` with unit ``k`` stride) packs ``B`` on the CPU through
    :func:`~accy_kernels.matmul_pack.transpose_kernel`'s work-group array: k = 32 (whole
    chunks of 16 f32 / 8 f64), 17 and 5 (a partial last chunk), n = 40 (a partial panel),
    a batched ``W`` (the separate pack forced: by default these copy ``W.T`` inside the
    job launch, :mod:`accy_kernels.matmul_sliver`); equal to numpy."""
    from accy.families import Plan, backend_object
    from accy_kernels.matmul_plan import plan_matmul
    from accy_kernels.matmul_problem import MatmulProblem

    rng = np.random.default_rng(zlib.crc32(f"tp{dtype}".encode()))
    for m, n, k, batch in [(7, 40, 32, "none"), (13, 40, 17, "b"), (2, 16, 5, "none")]:
        sa, sb = _batched((m, n, k), batch)
        a = _operand(rng, dtype, sa, False)
        b = _operand(rng, dtype, sb, True)
        cand = Candidate(0, 1, (("ku", 4), ("mr", 6), ("nv", 2), ("sliver", 0)))
        check(ak.matmul(a, b, variant="blocked", candidate=cand), a, b, dtype)
    # a W.T too big to copy per row block (8 blocks of 256 rows) is packed once
    prob = MatmulProblem(dtype, 1, 2048, 1024, 1024, (0, 1024, 1), (0, 1, 1024))
    plan = Plan("xwt")
    plan_matmul(plan, backend_object("cpu"), prob, plan.temp(dtype, 1), plan.temp(dtype, 1),
                plan.output(dtype, 2048 * 1024))
    assert "_kt" in plan._launches[0][0].name


def _barriers_under_if(stmts, inside=False) -> int:
    from accy.kernel import ir

    count = 0
    for s in stmts:
        if isinstance(s, ir.Barrier):
            count += inside
        elif isinstance(s, ir.For):
            count += _barriers_under_if(s.body, inside)
        elif isinstance(s, ir.If):
            count += _barriers_under_if(s.then, True) + _barriers_under_if(s.orelse, True)
    return count


def test_device_kernels_have_no_barrier_under_a_branch():
    """Device targets (PoCL, lavapipe, CUDA) get blocked and pack kernels with no branch
    around a barrier (PoCL miscomputed such bodies even with a group-uniform condition);
    the host forms keep the group-id guard of the thread pool's idle groups."""
    from accy_kernels.matmul_blocked import blocked_kernel, pack_kernel
    from accy_kernels.matmul_gemv import cols_kernel, rows_kernel
    from accy_kernels.matmul_tiled import tiled_kernel

    device = [blocked_kernel("f32", 6, 8, 2, 4, pa, pb, split=False)
              for pa in (False, True) for pb in (False, True)]
    device += [pack_kernel("f32", 16, unit, 8, False, 1, False) for unit in ("rows", "k", "any")]
    device += [rows_kernel("f32", 16, 4, False), cols_kernel("f32", 16, 4, False, False),
               tiled_kernel("f32", 16, 16, 4, 4, 16)]
    for kernel in device:
        assert _barriers_under_if(kernel.body) == 0, kernel.name
    assert _barriers_under_if(blocked_kernel("f32", 6, 8, 2, 4, False, True).body) > 0
    assert _barriers_under_if(pack_kernel("f32", 16, "rows", 8, True, 8, True).body) > 0


def test_blocked_whole_tile_stores_vectorize():
    """The whole-tile store of the CPU microkernel, bias + relu epilogue included, is vector
    code: one row per work-item loop (all rows in one loop stored 96 scalars via the stack)."""
    from accy.kernel import ir
    from accy.plugins import open_backend
    from accy_kernels.matmul_blocked import blocked_kernel, simd_lanes
    from accy_kernels.matmul_problem import Epilogue

    be = open_backend("cpu")
    lanes = simd_lanes(be, "f32")

    def relu_bias(acc, b, i, j):
        v = ir.Binary("add", acc, ir.Load("in3", j, "f32"), "f32")
        return [], ir.Binary("max", v, ir.Const(0.0, "f32"), "f32")

    ep = Epilogue("relu_bias_test", None, (("in3", "f32"),), relu_bias)
    text = be.emit(blocked_kernel("f32", 6, lanes, 2, 4, False, True, ep), "llvm-opt").decode()
    # vector stores of computed values that are not the accumulators' per-lane arrays
    stores = [line for line in text.splitlines() if "store <" in line and "%var." not in line]
    assert len(stores) >= 12, text
