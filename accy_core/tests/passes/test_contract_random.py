"""Seeded random programs through the contract stage compute the same bits as before."""

from __future__ import annotations

import numpy as np
import pytest
from accy.ir import Builder
from accy.passes import PassContext, run_stages
from accy.passes.reference_eval import evaluate
from pass_helpers import assert_bitwise_equal

SHAPE = (3, 4)
SCALARS = (0.0, -0.0, 1.0, 2.0, -1.5)


def _step(fb, rng: np.random.Generator, pool: list) -> None:
    """Append one random op reading the pool (scalars become splat constants)."""
    a = pool[rng.integers(len(pool))]
    b = pool[rng.integers(len(pool))] if rng.random() < 0.7 else float(rng.choice(SCALARS))
    kind = rng.integers(9)
    if kind == 0:
        pool.append(fb.add(a, b))
    elif kind == 1:
        pool.append(fb.mul(b, a) if isinstance(b, float) else fb.mul(a, b))
    elif kind == 2:
        pool.append(fb.sub(a, b))
    elif kind == 3:
        pool.append(fb.div(a, b))
    elif kind == 4:
        pool.append(fb.neg(fb.neg(a)) if rng.random() < 0.5 else fb.neg(a))
    elif kind == 5:
        pool.append(fb.transpose(fb.transpose(a, (1, 0)), (1, 0)))
    elif kind == 6:
        pool.append(fb.reshape(fb.reshape(a, (12,)), SHAPE))
    elif kind == 7:
        pool.append(fb.tanh(a))
    else:
        pool.append(fb.add(fb.reduce_sum(a, axes=(1,), keepdims=True), a))


def _program(seed: int):
    rng = np.random.default_rng(seed)
    b = Builder()
    t = b.tensor("f32", SHAPE)
    fb = b.begin_function("f", params=[t, t])
    pool = [fb.param(0), fb.param(1), fb.constant(t, rng.standard_normal(SHAPE))]
    for _ in range(int(rng.integers(4, 16))):
        _step(fb, rng, pool)
    picks = sorted({int(i) for i in rng.integers(2, len(pool), size=2)})
    fb.return_(*(pool[i] for i in picks))
    fb.finish()
    return b.finish()


@pytest.mark.parametrize("seed", range(40))
def test_contract_stage_keeps_every_bit(seed: int) -> None:
    module = _program(seed)
    (product,) = run_stages(module, PassContext(), until="contract", verify_each=True)
    rng = np.random.default_rng(1000 + seed)
    x = rng.standard_normal(SHAPE).astype(np.float32)
    x[0, :2] = (-0.0, np.nan)
    inputs = [x, rng.standard_normal(SHAPE).astype(np.float32)]
    assert_bitwise_equal(evaluate(product.module, "f", inputs), evaluate(module, "f", inputs))
    assert product.module.op_count() <= module.op_count()
