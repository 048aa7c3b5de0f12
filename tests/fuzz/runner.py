"""Compile a generated program on a backend and hold it to the oracle."""

from __future__ import annotations

import accy
import numpy as np

from .gen import Options, Program
from .oracle import mismatches, reference

__all__ = ["backend_options", "check_program"]


def backend_options(backend: str) -> Options:
    """What the generator emits for ``backend``: everything its declared capabilities allow
    (Vulkan declares no f64 math); no failure class is left out."""
    if backend != "vulkan":
        return Options()
    return Options(f64_math=False)


def check_program(program: Program, backend: str) -> None:
    """Compile, run and compare every result; AssertionError naming the program if not."""
    expected = reference(program.module, program.inputs)
    try:
        exe = accy.compile(program.module, backend)
        got = exe(*[np.array(x, copy=True) for x in program.inputs])
    except Exception as e:  # every failure is reported with the program that caused it
        raise AssertionError(f"{type(e).__module__}.{type(e).__name__}: {e}\n"
                             f"{program.describe()}") from e
    assert len(got) == len(expected), program.describe()
    for i, (g, (want, err)) in enumerate(zip(got, expected, strict=True)):
        why = mismatches(g, want, err)
        assert why is None, f"result #{i}: {why}\n{program.describe()}"
