"""How a real program's results are compared with numpy's (shared by the test modules of
:mod:`tests.programs.real`): the same number of results, each with numpy's shape, the dtype
the case table documents (numpy's by default), exact integers and booleans, floats within the
case's tolerance; a case in ``COUNTS`` may differ by that much in its last (count) result."""

from __future__ import annotations

from types import ModuleType

import numpy as np


def leaves(x) -> tuple:
    """A program's results as a tuple (one result is a tuple of one)."""
    return tuple(x) if isinstance(x, tuple) else (x,)


def check_results(cases: ModuleType, name: str, got: tuple, want: tuple) -> None:
    """Assert that ``got`` (accy's results of program ``name``) equals ``want`` (numpy's), by
    the rules of the case table ``cases`` (``ACCY_DTYPES``, ``TOL``, optional ``COUNTS``)."""
    assert len(got) == len(want)
    dtypes = cases.ACCY_DTYPES.get(name, tuple(str(np.asarray(w).dtype) for w in want))
    tol = cases.TOL.get(name, cases.TOL["default"])
    counts = getattr(cases, "COUNTS", {})
    for k, (g, w, dt) in enumerate(zip(got, want, dtypes, strict=True)):
        g, w = np.asarray(g), np.asarray(w)
        assert g.shape == w.shape, f"result {k}: shape {g.shape} != numpy's {w.shape}"
        assert str(g.dtype) == dt, f"result {k}: dtype {g.dtype} != {dt}"
        if name in counts and k == len(got) - 1:
            assert abs(int(g) - int(w)) <= counts[name], (int(g), int(w))
        elif w.dtype.kind in "iub":
            np.testing.assert_array_equal(g, w.astype(g.dtype))
        else:
            np.testing.assert_allclose(g, w.astype(g.dtype), rtol=tol, atol=tol)
