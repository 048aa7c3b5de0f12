"""Fixtures: one CPU backend per session and a helper running a kernel on it."""

from __future__ import annotations

import pytest
from accy.testing import kernels
from accy_backend_cpu.backend import CpuBackend


@pytest.fixture(scope="session")
def cpu():
    backend = CpuBackend(num_threads=2)
    yield backend
    backend.close()


@pytest.fixture(scope="session")
def run_kernel():
    """Return :func:`accy.testing.kernels.run_kernel`."""
    return kernels.run_kernel
