"""Loop-iteration limits (issue 10): lavapipe ends a work-item after 65535 loop iterations.

Three layers:

- the device capability (``max_loop_iterations``: 65535 on lavapipe, None on the CPU) and
  the static trip bound of kernel IR;
- every family, and the kernel stage's reductions, on the recording backend with a small
  limit: its interpreter raises where a limited device would silently cut a work-item, so
  a family that ignores the limit fails here without any device;
- the real boundary, trip counts 65,535 / 65,536 / 2**20, on every available backend (on
  lavapipe the limit is real; the smallest problem that reaches each boundary).
"""

from __future__ import annotations

import dataclasses
import itertools

import accy
import numpy as np
import pytest
import scipy.sparse as sp
from accy.backend.recording import RecordingBackend
from accy.errors import CapabilityError
from accy.families import Candidate, Plan, loop_budget, loop_passes
from accy.kernel import KernelBuilder
from accy.kernel.loops import loop_trips

import accy_kernels as ak

BOUNDARY = (65535, 65536, 1 << 20)
_IDS = itertools.count()


def limited(limit: int) -> RecordingBackend:
    """A recording backend (kernels run in the interpreter) with ``max_loop_iterations``."""
    return RecordingBackend(f"limited{next(_IDS)}", max_loop_iterations=limit)


def _counting_kernel():
    kb = KernelBuilder("count_to_n", 64)
    out = kb.buffer("out", "i32", "write")
    n = kb.scalar("n", "i32")
    g = kb.global_id()
    with kb.if_(g < 1):
        acc = kb.let("acc", kb.const(0, "i32"))
        with kb.for_("i", 0, n):
            kb.assign(acc, acc + 1)
        kb.store(out, g, acc)
    return kb.build()


def _count(backend, n: int) -> int:
    plan = Plan("count")
    out = plan.output("i32", 1)
    plan.launch(_counting_kernel(), 1, [out], [("i32", n)])
    return int(plan.run(backend)[0][0])


# --------------------------------------------------------------------------- capability


def test_capability_reported(backend):
    from accy.plugins import open_backend

    caps = open_backend(backend).capabilities()
    if backend == "cpu":
        assert caps.max_loop_iterations is None
    if "llvmpipe" in caps.device_name.lower():
        assert caps.max_loop_iterations == 65535
    assert open_backend(backend).target_profile().max_loop_iterations == caps.max_loop_iterations


def test_lavapipe_detection():
    vk = pytest.importorskip("accy_backend_vulkan.device")
    assert vk.loop_iteration_limit("llvmpipe (LLVM 15.0.6, 256 bits)") == 65535
    assert vk.loop_iteration_limit("some GPU", 13) == 65535  # VK_DRIVER_ID_MESA_LLVMPIPE
    assert vk.loop_iteration_limit("NVIDIA H200", 4) is None


@pytest.mark.parametrize("n", BOUNDARY)
def test_device_limit_is_real(backend, n):
    """The raw behaviour the capability describes: a loop past the limit is cut short."""
    from accy.plugins import open_backend

    limit = open_backend(backend).capabilities().max_loop_iterations
    got = _count(backend, n)
    assert got == (n if limit is None else min(n, limit))


def test_interpreter_enforces_limit():
    assert _count(limited(100), 100) == 100
    with pytest.raises(CapabilityError, match="more than 100 loop iterations"):
        _count(limited(100), 101)


def test_loop_trips_static_bound():
    kb = KernelBuilder("nested", 32)
    out = kb.buffer("out", "i32", "write")
    with kb.for_("i", 0, 10):
        with kb.for_("j", 0, 7):
            kb.store(out, 0, 1)
    with kb.for_("k", kb.local_id(), 100, 32):
        kb.store(out, 0, 2)
    assert loop_trips(kb.build()) == (1 + 10 * (1 + (1 + 7))) + (1 + 4)  # +1: loop exits
    assert loop_trips(_counting_kernel()) is None  # a scalar bound is not static


def test_loop_passes_and_budget():
    be = limited(1000)
    assert loop_budget(be) == 1000 and loop_budget("cpu") is None
    assert loop_passes(999, be) == (1, 999)  # + 1: the loop's exit test counts
    assert loop_passes(1000, be) == (2, 999)
    assert loop_passes(5000, be, fixed=40, loops=3) == (6, 957)
    assert loop_passes(10**9, "cpu") == (1, 10**9)
    with pytest.raises(CapabilityError, match="max_loop_iterations"):
        loop_passes(10, limited(5), fixed=5)


# ------------------------------------------------------- families under a small limit

L = 256  # small: the interpreter is slow; radix sort drops to 6-bit digits to fit
SMALL = (L, L + 1, 4 * L)


@pytest.mark.parametrize("m", SMALL)
@pytest.mark.parametrize("variant", ["atomic", "sorted", "privatized"])
def test_scatter_add_one_bin_small_limit(variant, m):
    out = ak.scatter_add(np.zeros(3, np.int32), np.zeros(m, np.int32), np.ones(m, np.int32),
                         backend=limited(L), variant=variant)
    assert out.tolist() == [m, 0, 0]


@pytest.mark.parametrize("size", SMALL)
def test_privatized_many_outputs_small_limit(size):
    idx = np.array([0, size - 1, size // 2, size - 1], np.int32)
    vals = np.array([1, 2, 3, 4], np.int64)
    want = np.zeros(size, np.int64)
    np.add.at(want, idx, vals)
    for fam in ("scatter_add", "segment_sum"):
        if fam == "scatter_add":
            got = ak.scatter_add(np.zeros(size, np.int64), idx, vals, backend=limited(L),
                                 variant="privatized")
        else:
            got = ak.segment_sum(vals, idx, size, backend=limited(L), variant="privatized")
        np.testing.assert_array_equal(got, want)


def test_privatized_refuses_what_cannot_fit():
    with pytest.raises(CapabilityError, match="privatized"):
        ak.scatter_add(np.zeros(1 << 20, np.int32), np.zeros(200, np.int32),
                       np.ones(200, np.int32), backend=limited(4), variant="privatized")


@pytest.mark.parametrize("ipt", SMALL)
def test_scan_long_tiles_small_limit(ipt):
    x = (np.arange(ipt + 2) % 7 - 3).astype(np.int32)
    got = ak.scan(x, backend=limited(L), candidate=Candidate(64, ipt))
    np.testing.assert_array_equal(got, np.cumsum(x))


@pytest.mark.parametrize("ipt", SMALL)
def test_sort_long_tiles_small_limit(ipt):
    x = np.random.default_rng(ipt).standard_normal(ipt + 2).astype(np.float32)
    got = ak.sort(x, backend=limited(L), candidate=Candidate(64, ipt))
    np.testing.assert_array_equal(got, np.sort(x))


def long_row_matrix(length: int, dtype=np.float64) -> sp.csr_matrix:
    """Row 1 has ``length`` entries (values 1..length mod 5), rows 0 and 2 one each."""
    rows = np.concatenate(([0], np.ones(length, np.int64), [2]))
    cols = np.concatenate(([0], np.arange(length), [length - 1]))
    vals = np.concatenate(([2.0], np.arange(length) % 5 + 1.0, [3.0])).astype(dtype)
    return sp.csr_matrix((vals, (rows, cols)), shape=(3, length))


SPMV = [("csr", "csr_scalar"), ("csr", "csr_vector"), ("coo", "coo"), ("coo", "coo_rows"),
        ("ell", "ell"), ("sell", "sell")]


@pytest.mark.parametrize("length", SMALL)
@pytest.mark.parametrize("fmt,variant", SPMV)
def test_spmv_long_row_small_limit(fmt, variant, length):
    A = long_row_matrix(length)
    x = np.random.default_rng(1).standard_normal(length)
    cand = Candidate(16) if variant == "csr_vector" else None  # 16 lanes: 16x shorter loops
    got = ak.spmv(A, x, fmt, backend=limited(L // 16 if cand else L), variant=variant,
                  candidate=cand)
    np.testing.assert_allclose(got, A @ x, rtol=1e-12)


@pytest.mark.parametrize("length", SMALL)
def test_spmm_long_row_small_limit(length):
    A = long_row_matrix(length)
    X = np.random.default_rng(2).standard_normal((length, 2))
    np.testing.assert_allclose(ak.spmm(A, X, backend=limited(L)), A @ X, rtol=1e-12)


def test_random_integers_small_limit():
    a = accy_random_ints(limited(L))
    np.testing.assert_array_equal(a, accy_random_ints("cpu"))


def accy_random_ints(backend):
    return ak.random.integers((4099,), 5, 0, 3 * 2**30 + 1, "u32", backend=backend)


# ------------------------------------------------------- compiled reductions (kernel stage)


def _reduce_module(shape, axes):
    b = accy.Builder()
    fb = b.begin_function("red", params=[b.tensor("f32", shape)])
    fb.return_(fb.reduce_sum(fb.param(0), axes=axes))
    fb.finish()
    return b.finish()


def _kernels_under(shape, axes, limit):
    from accy.passes import PassContext, run_stages
    from accy.plugins import open_backend

    cpu = open_backend("cpu").target_profile()
    # a device profile: without host_memory the CPU would outline lanes kernels instead
    profile = dataclasses.replace(cpu, max_loop_iterations=limit,
                                  features=cpu.features - {"host_memory"})
    ctx = PassContext(target_profile=profile, backend="cpu")
    final = run_stages(_reduce_module(shape, axes), ctx, until="kernel")[-1].module
    return final.attrs["kernels"]


@pytest.mark.parametrize("n_red", SMALL)
def test_compiled_reduction_fits_budget(n_red):
    unlimited = _kernels_under((100, n_red), [1], None)
    assert max(loop_trips(k) for k in unlimited.values()) >= n_red  # serial: one item/row
    for k in _kernels_under((100, n_red), [1], L).values():
        assert loop_trips(k) <= L


def test_compiled_reduction_refused_when_nothing_fits():
    with pytest.raises(CapabilityError, match="max_loop_iterations"):
        _kernels_under((100, 50000), [1], 4)


# ------------------------------------------------------- the real boundary, every backend


@pytest.mark.parametrize("m", BOUNDARY)
@pytest.mark.parametrize("variant", ["atomic", "sorted", "privatized"])
def test_scatter_add_one_bin_boundary(backend, variant, m):
    out = ak.scatter_add(np.full(2, 100, np.int32), np.zeros(m, np.int32),
                         np.ones(m, np.int32), backend=backend, variant=variant)
    assert out.tolist() == [100 + m, 100]


@pytest.mark.parametrize("size", BOUNDARY)
def test_privatized_outputs_boundary(backend, size):
    idx = np.array([size - 1, 0, size - 1, 1], np.int32)
    got = ak.segment_sum(np.arange(1, 5, dtype=np.int32), idx, size, backend=backend,
                         variant="privatized")
    want = np.zeros(size, np.int32)
    np.add.at(want, idx, np.arange(1, 5, dtype=np.int32))
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("ipt", BOUNDARY)
def test_scan_tile_boundary(backend, ipt):
    x = np.ones(ipt + 1, np.int32)
    got = ak.scan(x, backend=backend, candidate=Candidate(64, ipt))
    assert got[-1] == ipt + 1 and got[ipt - 1] == ipt


@pytest.mark.parametrize("ipt", BOUNDARY)
def test_sort_tile_boundary(backend, ipt):
    x = np.random.default_rng(ipt).integers(-10**6, 10**6, ipt + 1).astype(np.int32)
    np.testing.assert_array_equal(ak.sort(x, backend=backend, candidate=Candidate(64, ipt)),
                                  np.sort(x))


def test_declared_tuning_candidates_are_right(backend):
    """Every declared candidate of scan and sort (one was always wrong on lavapipe)."""
    from accy_kernels._families import FAMILIES

    fams = {f.name: f for f in FAMILIES}
    x = np.random.default_rng(3).integers(-9, 9, 70001).astype(np.int32)
    for c in fams["sort"].variants[0].candidates:
        np.testing.assert_array_equal(ak.sort(x, backend=backend, candidate=c), np.sort(x))
    for c in fams["scan"].variants[0].candidates:
        np.testing.assert_array_equal(ak.scan(x, backend=backend, candidate=c), np.cumsum(x))


@pytest.mark.parametrize("length", BOUNDARY)
@pytest.mark.parametrize("fmt,variant", SPMV)
def test_spmv_long_row_boundary(backend, fmt, variant, length):
    A = long_row_matrix(length, np.float32)
    x = np.ones(length, np.float32)
    cand = Candidate(16) if variant == "csr_vector" else None  # lanes loop length / 16 times
    if variant == "coo" and backend != "cpu":
        from accy.plugins import open_backend

        if "float_atomics" not in open_backend(backend).capabilities().features:
            pytest.skip(f"{backend}: no float atomics for spmv.coo")
    got = ak.spmv(A, x, fmt, backend=backend, variant=variant, candidate=cand)
    np.testing.assert_allclose(got, A @ x.astype(np.float64), rtol=1e-5)


@pytest.mark.parametrize("length", BOUNDARY)
def test_spmm_long_row_boundary(backend, length):
    A = long_row_matrix(length, np.float32)
    X = np.ones((length, 2), np.float32)
    np.testing.assert_allclose(ak.spmm(A, X, backend=backend), A @ X.astype(np.float64),
                               rtol=1e-5)


@pytest.mark.parametrize("n_red", BOUNDARY)
def test_compiled_reduction_boundary(backend, n_red):
    rows = 65 if n_red < BOUNDARY[-1] else 2  # > 64 rows: serial by default
    x = np.ones((rows, n_red), np.float32)
    (got,) = accy.compile(_reduce_module((rows, n_red), [1]), backend=backend)(x)
    np.testing.assert_array_equal(got, np.full(rows, n_red, np.float32))


@pytest.mark.parametrize("m", BOUNDARY)
@pytest.mark.parametrize("dtype", ["i32", "i64"])
def test_compiled_scatter_add_one_bin_boundary(backend, dtype, m):
    """A compiled program's ``scatter_add`` (atomic, or the sorted formulation where the
    backend lacks the atomics: i64 on lavapipe) of ``m`` values into one bin."""
    b = accy.Builder()
    fb = b.begin_function("f", params=[b.tensor(dtype, (2,)), b.tensor("i32", (m,)),
                                       b.tensor(dtype, (m,))])
    fb.return_(fb.scatter_add(fb.param(0), fb.param(1), fb.param(2)))
    fb.finish()
    npt = np.int32 if dtype == "i32" else np.int64
    (got,) = accy.compile(b.finish(), backend=backend)(
        np.full(2, 100, npt), np.zeros(m, np.int32), np.ones(m, npt))
    assert got.tolist() == [100 + m, 100]


@pytest.mark.slow
def test_issue_scan_of_2_26_plus_1_ones(backend):
    """The issue's reproducer: the default tile of 2**26 + 1 elements exceeded 65535. Its
    256 MiB input is past Vulkan's maxStorageBufferRange on lavapipe (128 MiB): refused
    there, naming the limit (a binding past it is undefined; it is never a silent result)."""
    from accy.errors import OutOfResources
    from accy.families import backend_object

    x = np.ones(2**26 + 1, np.int32)
    limit = getattr(backend_object(backend), "max_storage_buffer_range", None)
    if limit is not None and x.nbytes > limit:
        with pytest.raises(OutOfResources, match="maxStorageBufferRange"):
            ak.scan(x, backend=backend)
        return
    got = ak.scan(x, backend=backend)
    assert got[-1] == x.size and got[2**16] == 2**16 + 1


@pytest.mark.parametrize("k", BOUNDARY)
@pytest.mark.parametrize("variant", [None, "gemv", "blocked"])
def test_matmul_long_k_right_or_refused(backend, variant, k):
    """matmul walks k per work-item: right, or refused before launch, never cut short
    (``gemv`` in columns form ran k / 4 iterations: wrong from k = 262144 on lavapipe)."""
    from accy.errors import AccyError

    for sa, sb in (((k,), (k, 3)), ((1, k), (k, 1))):
        a, b = np.ones(sa, np.float32), np.ones(sb, np.float32)
        try:
            got = ak.matmul(a, b, backend=backend, variant=variant)
        except AccyError as e:
            assert backend != "cpu" or variant == "gemv", e  # the CPU has no loop limit
            continue
        np.testing.assert_array_equal(got, np.full(np.matmul(a, b).shape, k, np.float32))
