"""Fixture: the shared OpenCL backend (skips with the probe's reason)."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def ocl():
    """The process-wide ``opencl`` backend; skips where no usable OpenCL device exists."""
    from accy_backend_opencl.plugin import probe

    result = probe()
    if not result.available:
        pytest.skip(f"opencl unavailable: {result.reason}")
    from accy.plugins import open_backend

    return open_backend("opencl")

