"""The programs of :mod:`.programs_more` run under ``accy.jit`` and equal their numpy run:
shape, dtype (numpy's, or accy's documented one, :data:`.cases_more.ACCY_DTYPES`), values,
and the arguments they write into written back. On cpu all of them; on the device backends
those in :data:`.cases_more.DEVICE` (fancy indexing, scatter, scans: code that differs per
backend)."""

from __future__ import annotations

import accy
import numpy as np
import pytest

from tests.programs.real import cases_more as cases
from tests.programs.real import programs_more as programs
from tests.programs.real.checks import check_results, leaves


def _run(name: str, backend: str) -> None:
    fn = getattr(programs, name)
    host_args = cases.inputs(name)
    want = leaves(fn(*host_args))
    args = cases.inputs(name)
    got = leaves(accy.jit(fn, backend=backend)(*args))
    check_results(cases, name, got, want)
    tol = cases.TOL.get(name, cases.TOL["default"])
    for a, h in zip(args, host_args, strict=True):  # written arguments come back as numpy's
        if isinstance(a, np.ndarray):
            np.testing.assert_allclose(a, h, rtol=tol, atol=tol)


@pytest.mark.parametrize("name", cases.NAMES)
def test_program_equals_numpy_on_cpu(name: str) -> None:
    _run(name, "cpu")


@pytest.mark.parametrize("name", sorted(cases.DEVICE))
def test_program_equals_numpy_on_device(name: str, backend: str) -> None:
    if backend == "cpu":
        pytest.skip("covered by test_program_equals_numpy_on_cpu")
    _run(name, backend)
