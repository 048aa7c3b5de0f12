"""Kernel families on OpenCL against the CPU backend: counter-based random streams must be
equal bit for bit (the acceptance of issue 16), whatever the work-group size."""

from __future__ import annotations

import numpy as np
import pytest
from accy_kernels.random import generators

from accy_kernels import random

pytestmark = pytest.mark.opencl


@pytest.mark.parametrize("algorithm", random.ALGORITHMS)
def test_random_bits_equal_the_cpu_backend(ocl, algorithm):
    want = generators.run_distribution("cpu", algorithm, "bits", "u32", 5003, 77, 3, 0, 0)
    got = generators.run_distribution("opencl", algorithm, "bits", "u32", 5003, 77, 3, 0, 0,
                                      workgroup_size=64)
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("dtype", ["f32", "f64"])
def test_philox_uniform_and_integers_equal_the_cpu_backend(ocl, dtype):
    seed = (123 << 32) | 456
    np.testing.assert_array_equal(random.uniform(10007, seed, dtype, backend="opencl"),
                                  random.uniform(10007, seed, dtype, backend="cpu"))
    np.testing.assert_array_equal(random.integers(4099, seed, -50, 10**9, backend="opencl"),
                                  random.integers(4099, seed, -50, 10**9, backend="cpu"))


def test_philox_counters_equal_the_cpu_backend(ocl):
    rng = np.random.default_rng(3)
    counter = rng.integers(0, 2**32, (1000, 4), dtype=np.uint64).astype(np.uint32)
    key = np.array([0xDEADBEEF, 0x12345678], np.uint32)
    for rounds in (7, 10):
        np.testing.assert_array_equal(random.philox4x32(counter, key, rounds, backend="opencl"),
                                      random.philox4x32(counter, key, rounds, backend="cpu"))
