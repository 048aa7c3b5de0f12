"""Test support shared by accy's packages and third-party backends: tolerances, fixtures,
and (:mod:`accy.testing.kernels`, imported on its own) the kernel-IR test kernels every
backend's tests build, with a helper that runs one on a backend."""

from accy.testing.reference import TOLERANCES, assert_close, tolerance

__all__ = ["TOLERANCES", "assert_close", "tolerance"]
