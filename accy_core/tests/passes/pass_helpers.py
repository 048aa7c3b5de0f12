"""Helpers for pass tests: run one pass on parsed IR and compare values bit for bit."""

from __future__ import annotations

import numpy as np
from accy.ir import Module, parse_module
from accy.passes import PassContext, PassManager
from accy.passes.reference_eval import evaluate

RNG = np.random.default_rng(7)


def random_inputs(module: Module, fn_name: str = "f") -> list[np.ndarray]:
    """One random array per parameter of ``@fn_name`` (floats normal, ints in [-9, 9])."""
    out = []
    for p in module.function(fn_name).params:
        np_dtype = p.type.dtype.numpy
        if np_dtype.kind == "f":
            out.append(RNG.standard_normal(p.type.shape).astype(np_dtype))
        elif np_dtype.kind == "b":
            out.append(RNG.integers(0, 2, p.type.shape).astype(bool))
        else:
            out.append(RNG.integers(-9, 10, p.type.shape).astype(np_dtype))
    return out


def assert_bitwise_equal(actual: list[np.ndarray], expected: list[np.ndarray]) -> None:
    """Same count, dtypes, shapes and bytes (NaN payloads and signed zeros included)."""
    assert len(actual) == len(expected)
    for a, e in zip(actual, expected, strict=True):
        assert a.dtype == e.dtype and a.shape == e.shape
        assert np.ascontiguousarray(a).tobytes() == np.ascontiguousarray(e).tobytes(), (a, e)


def run_pipeline(text: str, pipeline: str, fn_name: str = "f", inputs=None) -> Module:
    """Parse ``text``, run ``pipeline`` on it (verifying after each pass), check that
    ``@fn_name`` computes the same bits before and after; return the rewritten module."""
    module = parse_module(text)
    module.verify()
    after = module.clone()
    PassManager(pipeline, verify_each=True).run(after, PassContext())
    inputs = random_inputs(module, fn_name) if inputs is None else inputs
    assert_bitwise_equal(evaluate(after, fn_name, inputs), evaluate(module, fn_name, inputs))
    return after
