"""numpy's host random generators inside an ``accy.jit`` function draw once, at trace time:
one AccyWarning says so at the user's call (numba's njit draws per call)."""

from __future__ import annotations

import warnings

import accy
import accy.numpy as anp
import numpy as np
import pytest
from accy.errors import AccyWarning
from numpy.random import rand as host_rand


def _uses_module(x):
    return x + np.random.rand(3)


def _uses_import(x):
    return x + host_rand(3)


def test_np_random_inside_jit_warns_once_at_the_call_and_is_a_constant():
    f = accy.jit(_uses_module)
    x = np.zeros(3)
    with pytest.warns(AccyWarning, match=r"np\.random .*runs once.*same on every call") as rec:
        first = f(x)
    assert rec[0].filename == __file__  # the user's line, not accy's
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        np.testing.assert_array_equal(f(x), first)  # as the warning says
        f(np.zeros(3, np.float32))  # another signature: traced again, warned once only


def test_imported_functions_and_closed_over_generators_are_found():
    with pytest.warns(AccyWarning, match="host_rand"):
        accy.jit(_uses_import)(np.zeros(3))
    rng = np.random.default_rng(0)

    def noisy(x):
        return x + rng.normal(size=3)
    with pytest.warns(AccyWarning, match="rng"):
        accy.jit(noisy)(np.zeros(3))


def test_keyed_accy_random_and_plain_numpy_do_not_warn():
    def keyed(x):
        return x * 2.0 + np.pi + anp.sum(x)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        accy.jit(keyed)(np.ones(3))
