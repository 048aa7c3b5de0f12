"""The trace budget (accy.frontend.trace_budget): a Python loop that unrolls into a huge
trace is told so, and refused past ACCY_TRACE_OP_LIMIT, instead of compiling for hours."""

from __future__ import annotations

import warnings

import accy
import numpy as np
import pytest
from accy.errors import AccyWarning, InputError, UnsupportedError
from accy.frontend import trace_budget


def _steps(x, n):
    for _ in range(n):  # unrolled at trace time: one add per iteration
        x = x + 1.0
    return x


def test_a_trace_past_the_limit_is_refused_naming_the_loop_line(monkeypatch):
    monkeypatch.setenv("ACCY_TRACE_OP_LIMIT", "2000")
    f = accy.jit(_steps, static_argnums=1)
    x = np.zeros(4, np.float32)
    with pytest.raises(UnsupportedError, match=r"2,048 operations at test_trace_budget\.py:\d+"
                       r".*accy\.fori_loop.*ACCY_TRACE_OP_LIMIT") as info:
        f(x, 5000)
    assert info.value.alternative == "accy.fori_loop"
    np.testing.assert_array_equal(f(x, 3), x + 3)  # the jit still works for a small trace


def test_a_large_trace_warns_once_and_zero_means_no_limit(monkeypatch):
    monkeypatch.setenv("ACCY_TRACE_OP_LIMIT", "0")
    monkeypatch.setattr(trace_budget, "WARN_OPS", 1000)
    x = np.zeros(4, np.float32)
    with pytest.warns(AccyWarning, match="compilation grows with it") as record:
        accy.jit(_steps, static_argnums=1).lower(x, 2100)
    assert len([w for w in record if issubclass(w.category, AccyWarning)]) == 1
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        accy.jit(_steps, static_argnums=1).lower(x, 100)  # a small trace says nothing


def test_a_malformed_limit_names_the_variable(monkeypatch):
    monkeypatch.setenv("ACCY_TRACE_OP_LIMIT", "lots")
    with pytest.raises(InputError, match="ACCY_TRACE_OP_LIMIT"):
        accy.jit(_steps, static_argnums=1).lower(np.zeros(2, np.float32), 2)
