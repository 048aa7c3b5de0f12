"""Fixtures: the shared OpenCL backend (skips with the probe's reason) and a kernel runner."""

from __future__ import annotations

import numpy as np
import pytest
from accy.backend import Geometry


@pytest.fixture(scope="session")
def ocl():
    """The process-wide ``opencl`` backend; skips where no usable OpenCL device exists."""
    from accy_backend_opencl.plugin import probe

    result = probe()
    if not result.available:
        pytest.skip(f"opencl unavailable: {result.reason}")
    from accy.plugins import open_backend

    return open_backend("opencl")


def run(backend, kernel, groups, arrays, scalars, options=None):
    """Compile, load and launch ``kernel``; return the arrays read back."""
    loaded = backend.load(backend.compile(kernel, options))
    buffers = []
    for a in arrays:
        buf = backend.allocate(a.nbytes)
        backend.write(buf, a)
        buffers.append(buf)
    pairs = [(p.dtype, v) for p, v in zip(kernel.scalars, scalars, strict=True)]
    backend.launch(loaded, Geometry(groups, kernel.workgroup_size), buffers, pairs)
    out = [backend.read(b, np.empty_like(a)) for b, a in zip(buffers, arrays, strict=True)]
    for b in buffers:
        backend.free(b)
    backend.destroy(loaded)
    return out
