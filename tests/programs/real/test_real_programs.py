"""Numpy programs as a new user writes them (:mod:`.programs`) run under ``accy.jit`` on
every backend and equal their numpy run: shape, dtype (numpy's, or the one accy documents,
:data:`.cases.ACCY_DTYPES`) and values."""

from __future__ import annotations

import accy
import numpy as np
import pytest
from accy.errors import CapabilityError

from tests.programs.real import cases, programs


def _leaves(x) -> tuple:
    return tuple(x) if isinstance(x, tuple) else (x,)


def _want(name: str, args: tuple) -> tuple:
    fn = getattr(programs, name)
    if name in cases.REFERENCE_ONLY:
        return _leaves(accy.jit(fn, backend="reference",
                                static_argnums=cases.STATIC.get(name, ()))(*args))
    return _leaves(fn(*args))


def _check(name: str, got: tuple, want: tuple) -> None:
    assert len(got) == len(want)
    dtypes = cases.ACCY_DTYPES.get(name, tuple(str(np.asarray(w).dtype) for w in want))
    tol = cases.TOL.get(name, cases.TOL["default"])
    for k, (g, w, dt) in enumerate(zip(got, want, dtypes, strict=True)):
        g, w = np.asarray(g), np.asarray(w)
        assert g.shape == w.shape, f"result {k}: shape {g.shape} != numpy's {w.shape}"
        assert str(g.dtype) == dt, f"result {k}: dtype {g.dtype} != {dt}"
        if name in cases.COUNTS and k == len(got) - 1:
            assert abs(int(g) - int(w)) <= cases.COUNTS[name], (int(g), int(w))
        elif w.dtype.kind in "iub":
            np.testing.assert_array_equal(g, w.astype(g.dtype))
        else:
            np.testing.assert_allclose(g, w.astype(g.dtype), rtol=tol, atol=tol)


@pytest.mark.parametrize("name", cases.NAMES)
def test_real_program_equals_numpy(name: str, backend: str) -> None:
    want = _want(name, cases.inputs(name))
    fn = accy.jit(getattr(programs, name), backend=backend,
                  static_argnums=cases.STATIC.get(name, ()))
    args = cases.inputs(name)
    try:
        got = _leaves(fn(*args))
    except CapabilityError as e:  # complex128 needs f64 on the device
        pytest.skip(f"{backend} cannot run {name}: {e}")
    _check(name, got, want)
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
