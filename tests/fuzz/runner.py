"""Compile a generated program on a backend and hold it to the oracle."""

from __future__ import annotations

import accy
import numpy as np

from .gen import Options, Program
from .oracle import mismatches, reference

__all__ = ["backend_options", "check_program"]

# Failure classes owned by the vulkan-limits work (issue 10), left out of generated programs
# on Vulkan until they are fixed; each has its own xfail test in test_fuzz_programs.py.
VULKAN_FLOAT_TO_INT = ("vulkan-limits class 'float->int casts fail to compile on Vulkan' "
                       "(issue 10)")
VULKAN_IEEE = ("vulkan-limits class 'IEEE semantics not requested: inf/NaN/-0.0/denormal "
               "inputs folded or flushed on Vulkan' (issue 10)")


def backend_options(backend: str) -> Options:
    """What the generator emits for ``backend``: its declared capabilities, minus the
    owned, not-yet-fixed failure classes (named in ``excluded``)."""
    if backend != "vulkan":
        return Options()
    return Options(f64_math=False, float_to_int=False, specials=False, denormals=False,
                   excluded={"float->int cast": VULKAN_FLOAT_TO_INT,
                             "inf/NaN/-0.0/denormal inputs": VULKAN_IEEE})


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
