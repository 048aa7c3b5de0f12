"""Fixtures: one CPU backend per session and a helper running a kernel on it."""

from __future__ import annotations

import numpy as np
import pytest
from accy.backend import Geometry
from accy_backend_cpu.backend import CpuBackend


@pytest.fixture(scope="session")
def cpu():
    backend = CpuBackend(num_threads=2)
    yield backend
    backend.close()


@pytest.fixture(scope="session")
def run_kernel():
    """Return :func:`_run_kernel`."""
    return _run_kernel


def _run_kernel(backend, kernel, groups, arrays, scalars, options=None):
    """Compile and launch ``kernel``; return copies of ``arrays`` after the launch."""
    loaded = backend.load(backend.compile(kernel, options))
    buffers = []
    for a in arrays:
        buf = backend.allocate(a.nbytes)
        backend.write(buf, a)
        buffers.append(buf)
    pairs = [(p.dtype, v) for p, v in zip(kernel.scalars, scalars, strict=True)]
    backend.launch(loaded, Geometry(groups, kernel.workgroup_size), buffers, pairs)
    return [backend.read(b, np.empty_like(a)) for b, a in zip(buffers, arrays, strict=True)]
