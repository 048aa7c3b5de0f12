"""Numpy programs as a new user writes them (:mod:`.programs`) run under ``accy.jit`` on
every backend and equal their numpy run: shape, dtype (numpy's, or the one accy documents,
:data:`.cases.ACCY_DTYPES`) and values."""

from __future__ import annotations

import accy
import numpy as np
import pytest
from accy.errors import CapabilityError

from tests.programs.real import cases, programs
from tests.programs.real.checks import check_results, leaves


def _want(name: str, args: tuple) -> tuple:
    fn = getattr(programs, name)
    if name in cases.REFERENCE_ONLY:
        return leaves(accy.jit(fn, backend="reference",
                                static_argnums=cases.STATIC.get(name, ()))(*args))
    return leaves(fn(*args))


@pytest.mark.parametrize("name", cases.NAMES)
def test_real_program_equals_numpy(name: str, backend: str) -> None:
    want = _want(name, cases.inputs(name))
    fn = accy.jit(getattr(programs, name), backend=backend,
                  static_argnums=cases.STATIC.get(name, ()))
    args = cases.inputs(name)
    try:
        got = leaves(fn(*args))
    except CapabilityError as e:  # complex128 needs f64 on the device
        pytest.skip(f"{backend} cannot run {name}: {e}")
    check_results(cases, name, got, want)
    if name == "mc_pi":
        assert abs(float(got[0]) - np.pi) < 0.2
    for a, fresh in zip(args, cases.inputs(name), strict=True):  # arguments written back
        if isinstance(a, np.ndarray) and name not in ("cavity_flow", "channel_flow"):
            np.testing.assert_array_equal(a, fresh)


def test_flow_programs_write_their_arguments_back() -> None:
    """cavity_flow updates u, v, p in place, like numpy: the caller's arrays change."""
    args = cases.inputs("cavity_flow")
    ref = cases.inputs("cavity_flow")
    programs.cavity_flow(*ref)
    accy.jit(programs.cavity_flow, backend="cpu")(*args)
    for a, r in zip(args[:3], ref[:3], strict=True):
        np.testing.assert_allclose(a, r, rtol=1e-4, atol=1e-6)
    assert np.abs(args[0]).max() > 0  # the lid moved the fluid
