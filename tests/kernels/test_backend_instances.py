"""Family kernels are loaded per backend *object*: a second instance of a backend (its own
context or device) never receives a kernel loaded in another one (OpenCL raised
INVALID_CONTEXT; Vulkan would use a pipeline of another VkDevice)."""

import numpy as np
import pytest

import accy_kernels as ak


def _fresh(name):
    if name == "opencl":
        mod = pytest.importorskip("accy_backend_opencl.backend")
        from accy_backend_opencl.plugin import probe

        if not probe().available:
            pytest.skip(f"opencl unavailable: {probe().reason}")
        return mod.OpenCLBackend()
    mod = pytest.importorskip("accy_backend_cpu.backend")
    return mod.CpuBackend()


@pytest.mark.parametrize("name", ["cpu", "opencl"])
def test_a_second_backend_instance_loads_its_own_kernels(name):
    first = ak.random.uniform((1000,), 3, backend=name)
    second = ak.random.uniform((1000,), 3, backend=_fresh(name))
    np.testing.assert_array_equal(first, second)
