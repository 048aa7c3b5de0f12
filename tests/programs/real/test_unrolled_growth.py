"""Issue 11: a Python loop unrolled at trace time (cavity flow's pressure sweeps) repeats
the same kernels; the code compiled must not grow with the trip count, only the launches.

Counted, never timed: launches per call, and the distinct kernel codes (kernels equal up
to their name share one compiled function, ``CpuBackend.compile_program``).
"""

from __future__ import annotations

import accy
import numpy as np
from accy.passes.outline_kernels import structural_fingerprint

from tests.programs.real import cases, programs


def _compiled(nit: int) -> tuple[int, int, np.ndarray]:
    args = list(cases.inputs("cavity_flow", "test"))
    args[4] = nit
    f = accy.jit(programs.cavity_flow, backend="cpu")
    exe = f.compile(*args)
    distinct = {structural_fingerprint(k) for k in exe.kernels.values()}
    got = f(*[a.copy() if isinstance(a, np.ndarray) else a for a in args])
    want = programs.cavity_flow(*[a.copy() if isinstance(a, np.ndarray) else a
                                  for a in args])
    np.testing.assert_allclose(got[2], want[2], rtol=2e-3, atol=2e-3)
    return exe.kernel_count, len(distinct), got[2]


def test_distinct_kernels_do_not_grow_with_unrolled_sweeps() -> None:
    launches_2, distinct_2, _ = _compiled(2)
    launches_6, distinct_6, _ = _compiled(6)
    assert launches_6 > launches_2  # the sweeps are unrolled: more launches ...
    assert distinct_6 == distinct_2  # ... of the same few kernels
