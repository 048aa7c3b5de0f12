"""Float → integer casts on every backend: numpy for in-range values, accy's documented
convention (saturate, NaN → 0; ``docs/numerics.md``) for NaN, ±inf and out-of-range values.

Three ways in: ``arith.cast`` (builder), ``astype`` (traced), the kernel DSL's ``.cast``.
"""

from __future__ import annotations

import accy
import accy.numpy as anp
import numpy as np
import pytest
from accy.backend import Geometry
from accy.kernel import KernelBuilder, interpret
from accy.numerics import saturating_cast

from tests._backends import open_live_backend as open_backend

PAIRS = [(f, i) for f in ("f32", "f64") for i in ("i32", "i64", "u32")]
NP = {"f32": np.float32, "f64": np.float64, "i32": np.int32, "i64": np.int64, "u32": np.uint32}


def special_values(src: str, dst: str) -> np.ndarray:
    """NaN, ±inf, ±0, fractions, values at and around the integer type's limits."""
    info = np.iinfo(NP[dst])
    lo, hi = float(info.min), float(info.max)
    vals = [np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0, 0.5, -0.5, 0.99, -0.99, 1.5, -1.5,
            2.5, -2.5, 1e3 + 0.75, -1e3 - 0.75, 1e30, -1e30, 3e9, -3e9, 5e18, -5e18, 1e19,
            -1e19, lo, hi, lo - 1.0, hi + 1.0, lo * 2, hi * 2, np.nextafter(hi, 0.0),
            np.finfo(NP[src]).max, -np.finfo(NP[src]).max, np.finfo(NP[src]).tiny,
            2.0**31, -(2.0**31), 2.0**32, 2.0**63, -(2.0**63), 2.0**64, -1.0, 16777217.0]
    return np.array(vals, dtype=np.float64).astype(NP[src])


def test_reference_convention():
    """The convention itself: numpy where defined, saturation and NaN → 0 elsewhere."""
    x = np.array([np.nan, np.inf, -np.inf, 3e9, -3e9, 1.9, -1.9, -0.5], np.float64)
    assert saturating_cast(x, np.int32).tolist() == [0, 2**31 - 1, -(2**31), 2**31 - 1,
                                                      -(2**31), 1, -1, 0]
    assert saturating_cast(x, np.uint32).tolist() == [0, 2**32 - 1, 0, 3000000000, 0, 1, 0, 0]
    big = np.array([2.0**63, 1e19, -1e19, -(2.0**63)], np.float64)
    assert saturating_cast(big, np.int64).tolist() == [2**63 - 1, 2**63 - 1, -(2**63),
                                                        -(2**63)]
    inside = np.array([-7.9, 0.0, 12345.6, -(2.0**31)], np.float32)
    np.testing.assert_array_equal(saturating_cast(inside, np.int32), inside.astype(np.int32))


@pytest.mark.parametrize(("src", "dst"), PAIRS)
def test_arith_cast_special_values(backend, src, dst):
    x = special_values(src, dst)
    b = accy.Builder()
    fb = b.begin_function("cast", params=[b.tensor(src, x.shape)])
    fb.return_(fb.cast(fb.param(0), dst))
    fb.finish()
    (got,) = accy.compile(b.finish(), backend=backend)(x)
    assert got.dtype == NP[dst]
    np.testing.assert_array_equal(got, saturating_cast(x, NP[dst]), err_msg=f"{x}")


@pytest.mark.parametrize(("src", "dst"), PAIRS)
def test_astype_matches_numpy_in_range(backend, src, dst):
    rng = np.random.default_rng(7)
    lo = 0 if dst == "u32" else -2e9
    x = rng.uniform(lo, 2e9, 1000).astype(NP[src])
    fn = accy.jit(lambda a: a.astype(NP[dst]) + anp.ones((), NP[dst]), backend=backend)
    got = fn(x)
    np.testing.assert_array_equal(got, x.astype(NP[dst]) + NP[dst](1))


@pytest.mark.parametrize(("src", "dst"), PAIRS)
def test_kernel_dsl_cast_special_values(backend, src, dst):
    x = special_values(src, dst)
    kb = KernelBuilder(f"cast_{src}_{dst}", 64)
    out, inp = kb.buffer("out", dst, "write"), kb.buffer("x", src, "read")
    i = kb.global_id()
    with kb.if_(i < len(x)):
        kb.store(out, i, inp[i].cast(dst))
    kernel = kb.build()
    want = [np.zeros(len(x), NP[dst]), x.copy()]
    interpret(kernel, 1, want, [])
    np.testing.assert_array_equal(want[0], saturating_cast(x, NP[dst]))
    be = open_backend(backend)
    loaded = be.load(be.compile(kernel))
    bufs = []
    for a in (np.zeros(len(x), NP[dst]), x):
        bufs.append(be.allocate(a.nbytes))
        be.write(bufs[-1], a)
    try:
        be.launch(loaded, Geometry(1, 64), bufs, [])
        be.synchronize()
        got = be.read(bufs[0], np.empty(len(x), NP[dst]))
    finally:
        for buf in bufs:
            be.free(buf)
        be.destroy(loaded)
    np.testing.assert_array_equal(got, want[0], err_msg=f"{x}")
