"""Random tensor programs (tests/fuzz/gen.py) on every backend versus the oracle.

Zero crashes, raw exceptions or wrong answers: any exception from compile or run fails, and
every result must be a correct evaluation within the oracle's bound (tests/fuzz/oracle.py).
The failure classes it has found are pinned as regression tests next to the code they
fixed (accy_core/tests/passes/test_bufferize.py, ...).
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from .gen import programs
from .profile import fuzz_settings
from .runner import VULKAN_FLOAT_TO_INT, VULKAN_IEEE, backend_options, check_program

pytestmark = pytest.mark.fuzz

SHORT = {"cpu": 250, "vulkan": 200}


def test_fuzz_programs(backend: str) -> None:
    """Generated programs compile, run and match the oracle on ``backend``."""
    if backend not in SHORT:
        pytest.skip(f"the fuzzer does not target {backend!r} yet")

    ran = []

    @fuzz_settings(SHORT[backend])
    @given(st.data())
    def run(data) -> None:
        ran.append(1)
        if len(ran) % 500 == 0:  # progress of a long run (visible with -s)
            print(f"{backend}: {len(ran)} programs", flush=True)
        check_program(data.draw(programs(backend_options(backend)), label="program"), backend)

    run()
    print(f"{backend}: {len(ran)} programs")
    assert len(ran) >= SHORT[backend] // 2, "the generator gave up early"


def _cast_program(dtype: str):
    from accy.ir import Builder

    b = Builder()
    fb = b.begin_function("f", params=[b.tensor("f32", (6,))])
    fb.return_(fb.cast(fb.param(0), dtype))
    fb.finish()
    return b.finish()


@pytest.mark.vulkan
@pytest.mark.xfail(reason=VULKAN_FLOAT_TO_INT, strict=False)
def test_vulkan_float_to_int_cast_left_out_of_the_fuzzer(backend: str) -> None:
    """The class the Vulkan fuzz run leaves out: remove the exclusion once this passes."""
    if backend != "vulkan":
        pytest.skip("Vulkan-only exclusion")
    import accy

    x = np.array([0.0, 1.5, -2.5, 7.9, -0.0, 3.0], dtype=np.float32)
    (got,) = accy.compile(_cast_program("i32"), "vulkan")(x)
    np.testing.assert_array_equal(got, x.astype(np.int32))


@pytest.mark.vulkan
@pytest.mark.xfail(reason=VULKAN_IEEE, strict=False)
def test_vulkan_ieee_specials_left_out_of_the_fuzzer(backend: str) -> None:
    """inf/NaN survive x - x on Vulkan: remove the exclusion once this passes."""
    if backend != "vulkan":
        pytest.skip("Vulkan-only exclusion")
    import accy
    from accy.ir import Builder

    b = Builder()
    fb = b.begin_function("f", params=[b.tensor("f32", (4,))])
    fb.return_(fb.sub(fb.param(0), fb.param(0)), fb.mul(fb.param(0), 0.0))
    fb.finish()
    x = np.array([np.inf, -np.inf, np.nan, 1.0], dtype=np.float32)
    got = accy.compile(b.finish(), "vulkan")(x)
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(got[0], x - x)
        np.testing.assert_array_equal(got[1], x * np.float32(0))
