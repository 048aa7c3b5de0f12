"""Test support shared by accy's packages and third-party backends: tolerances, fixtures."""

from accy.testing.reference import TOLERANCES, assert_close, tolerance

__all__ = ["TOLERANCES", "assert_close", "tolerance"]
