"""The CPU backend's vectorized f32 exp/log/tanh against numpy: ulp bounds and special values."""

from __future__ import annotations

import accy
import numpy as np
import pytest

BOUNDS_ULP = {"exp": 3, "log": 4, "tanh": 2}


def _inputs(op: str) -> np.ndarray:
    rng = np.random.default_rng(1)
    special = [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-30, -1e-30, 1.0, -1.0]
    if op == "exp":
        core = [rng.uniform(-104, 89, 200_000), rng.uniform(-3, 3, 50_000), [88.7, 88.73, -87.4, -103.9]]
    elif op == "log":
        core = [np.exp(rng.uniform(-103, 88, 200_000)), rng.uniform(0, 3, 50_000), [1e-40, 0.70710677]]
    else:
        core = [rng.uniform(-20, 20, 200_000), rng.uniform(-1, 1, 50_000), [0.6249, 0.625]]
    return np.concatenate([*core, special]).astype(np.float32)


@pytest.mark.parametrize("op", sorted(BOUNDS_ULP))
def test_vectorized_math_matches_numpy(op):
    x = _inputs(op)
    b = accy.Builder()
    t = b.tensor("f32", x.shape)
    fb = b.begin_function(op, params=[t])
    fb.return_(getattr(fb, op)(fb.param(0)))
    fb.finish()
    (got,) = accy.compile(b.finish(), backend="cpu")(x)
    with np.errstate(all="ignore"):
        want = getattr(np, op)(x)
    same_special = (np.isnan(got) & np.isnan(want)) | (got == want)
    finite = np.isfinite(want) & (want != 0)
    assert same_special[~finite].all(), x[~finite][~same_special[~finite]]
    ulps = np.abs(got[finite].astype(np.float64) - want[finite]) / np.spacing(np.abs(want[finite]))
    assert ulps.max() <= BOUNDS_ULP[op]


def test_vecmath_is_vectorized():
    from accy.kernel.dsl import KernelBuilder, call
    from accy_backend_cpu.backend import CpuBackend

    kb = KernelBuilder("vexp", workgroup_size=256)
    y = kb.buffer("y", "f32", "write")
    x = kb.buffer("x", "f32", "read")
    gid = kb.global_id()
    kb.store(y, gid, call("exp", x[gid]))
    kernel = kb.build()
    ir = CpuBackend().emit(kernel, "llvm-opt").decode()
    assert "x float>" in ir and "@expf" not in ir
