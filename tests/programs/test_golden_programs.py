"""Every function of every golden IR file runs on every backend and equals the IR reference.

The goldens (accy_core/tests/ir/golden/) cover every registered op and dtype; the oracle is
the op registry's numpy reference semantics (``accy.passes.reference_eval.evaluate``).
"""

from __future__ import annotations

from pathlib import Path

import accy
import numpy as np
import pytest
from accy.errors import CapabilityError
from accy.passes.reference_eval import evaluate
from accy.testing import assert_close

GOLDEN = Path(__file__).resolve().parents[2] / "accy_core" / "tests" / "ir" / "golden"


def _cases():
    for path in sorted(GOLDEN.glob("*.accy")):
        module = accy.parse_module(path.read_text())
        for fn in module.functions:
            yield pytest.param(path, fn.name, id=f"{path.stem}-{fn.name}")


def _input(t, rng):
    npd = t.dtype.numpy
    if t.dtype.value == "bool":
        return rng.integers(0, 2, t.shape).astype(bool)
    if t.dtype.is_float:
        return (rng.standard_normal(t.shape) * 2).astype(npd)
    if t.dtype.value == "u32":
        return rng.integers(0, 1000, t.shape).astype(npd)
    return rng.integers(-50, 50, t.shape).astype(npd)


@pytest.mark.parametrize(("path", "fn_name"), list(_cases()))
def test_golden_function_matches_reference(backend, path, fn_name):
    module = accy.parse_module(path.read_text())
    fn = module.function(fn_name)
    rng = np.random.default_rng(0)
    inputs = [_input(t, rng) for t in fn.param_types]
    with np.errstate(all="ignore"):
        expected = evaluate(module, fn_name, inputs)
    try:
        exe = accy.compile(module, backend=backend, function=fn_name)
    except CapabilityError as e:
        pytest.skip(f"{backend} cannot run it: {e}")
    got = exe(*inputs)
    for i, (g, w) in enumerate(zip(got, expected, strict=True)):
        assert_close(g, w, scale=10, what=f"{fn_name} result #{i}")
