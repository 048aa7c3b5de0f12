"""accy_backend_cpu.native_call: a chain of bound launches as one builtin function (no
ctypes per call): the results, the error word, the references it returns, and misuse that
must raise rather than crash."""

from __future__ import annotations

import sys

import numpy as np
import pytest
from accy.errors import LaunchError
from accy.kernel import KernelBuilder
from accy.runtime.fast_call import _address
from accy_backend_cpu.native_call import bind_native_call, native_calls_available

from accy_backend_cpu import CpuBackend

pytestmark = pytest.mark.skipif(not native_calls_available(), reason="no native calls here")


def _kernels():
    kb = KernelBuilder("nc_flag", 32)
    err = kb.buffer("err", "i32", "readwrite")
    src = kb.buffer("src", "f64", "read")
    n = kb.scalar("n", "i32")
    i = kb.global_id()
    with kb.if_((i < n) & (src[i] < 0.0)):
        kb.store(err, 0, i)
    flag = kb.build()
    kb = KernelBuilder("nc_axpy", 32)
    out = kb.buffer("out", "f64", "write")
    src, x = kb.buffer("src", "f64", "read"), kb.buffer("x", "f64", "read")
    n, a = kb.scalar("n", "i32"), kb.scalar("a", "f64")
    i = kb.global_id()
    with kb.if_(i < n):
        kb.store(out, i, a * x[i] + src[i])
    return flag, kb.build()


@pytest.mark.parametrize("release_gil", [False, True])
def test_chain_runs_in_order_and_reports_through_the_error_word(release_gil):
    be = CpuBackend(num_threads=1)
    flag, axpy = (be.load(be.compile(k)) for k in _kernels())
    src = np.arange(100, dtype=np.float64)
    f = bind_native_call(be, [
        (flag, 4, [("i32", 100)], ["err", _address(src)]),
        (axpy, 4, [("i32", 100), ("f64", 2.0)], [("arg", 0), _address(src), ("arg", 1)]),
    ], release_gil)
    x, fail = np.ones(100), object()
    y = np.empty(100)
    refs = sys.getrefcount(y)
    got = f(y, x, fail)
    assert got is y
    del got
    assert sys.getrefcount(y) == refs  # the result was a new reference, now dropped
    np.testing.assert_array_equal(y, 2.0 + src)
    src[37] = -1.0  # the first kernel flags it: the second one is skipped
    y2 = np.full(100, 7.0)
    assert f(y2, x, fail) is fail and (y2 == 7.0).all()
    src[37] = 37.0
    assert f(y2, x, fail) is y2  # the error word is per call, not left set
    with pytest.raises(SystemError):  # a wrong argument count raises, never crashes
        f(y, x)
    del flag, axpy  # the function keeps the kernels and their code alive
    assert f(np.empty(100), x, fail) is not fail


def test_destroyed_kernel_is_refused_when_binding():
    be = CpuBackend(num_threads=1)
    flag, _ = _kernels()
    loaded = be.load(be.compile(flag))
    be.destroy(loaded)
    with pytest.raises(LaunchError):
        bind_native_call(be, [(loaded, 1, [("i32", 1)], ["err", 0])], False)
