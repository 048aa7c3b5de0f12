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
from .runner import backend_options, check_program

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


def test_no_class_is_left_out_of_the_fuzzer(backend: str) -> None:
    """Float -> int casts and IEEE special values (once left out on Vulkan) are generated on
    every backend: nothing but a declared capability narrows the generator."""
    from .gen import Options, _specials

    opts = backend_options(backend)
    assert opts == (Options(f64_math=False) if backend == "vulkan" else Options())
    f32 = _specials("f32")
    assert np.isnan(f32).any() and np.isinf(f32).any() and -0.0 in f32
    assert any(0 < abs(v) < np.finfo(np.float32).tiny for v in f32)


@pytest.mark.vulkan
def test_vulkan_float_to_int_cast(backend: str) -> None:
    """Regression (issue 10): float -> int casts failed to compile on Vulkan, so the Vulkan
    fuzz run left them out."""
    if backend != "vulkan":
        pytest.skip("Vulkan-only regression")
    import accy

    x = np.array([0.0, 1.5, -2.5, 7.9, -0.0, 3.0], dtype=np.float32)
    (got,) = accy.compile(_cast_program("i32"), "vulkan")(x)
    np.testing.assert_array_equal(got, x.astype(np.int32))


@pytest.mark.vulkan
def test_vulkan_ieee_specials(backend: str) -> None:
    """Regression (issue 10): inf/NaN survive x - x and x * 0 on Vulkan (the driver folded
    them without float-controls modes, so the Vulkan fuzz run left special values out)."""
    if backend != "vulkan":
        pytest.skip("Vulkan-only regression")
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
