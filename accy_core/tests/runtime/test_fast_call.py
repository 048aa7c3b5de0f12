"""The small-call fast path (accy.runtime.fast_call): same results and same errors as the
ordinary path, which it leaves every call it does not cover to."""

from __future__ import annotations

import accy
import accy.numpy as anp
import numpy as np
import pytest
from accy.errors import AccyError, InputError


def _module():
    b = accy.Builder()
    t = b.tensor("f32", (8, 4))
    fb = b.begin_function("fast", params=[t, t])
    x, y = fb.param(0), fb.param(1)
    s = fb.reduce_sum(fb.mul(x, y), axes=[1])  # two kernels, a temporary between them
    z = fb.add(fb.sqrt(fb.abs(x)), y)
    fb.return_(s, z, z, y)  # a result twice, and a parameter passed through
    fb.finish()
    return b.finish()


def _inputs(seed=0):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal((8, 4)).astype(np.float32) for _ in range(2)]


def _expected(x, y):
    z = np.sqrt(np.abs(x)) + y
    return (x * y).sum(axis=1), z, z, y


def _check(got, x, y):
    for g, e in zip(got, _expected(x, y), strict=True):
        np.testing.assert_allclose(g, e, rtol=1e-6)


def test_fast_path_equals_the_ordinary_path():
    exe = accy.compile(_module(), use_cache=False)
    x, y = _inputs()
    first = exe(x, y)  # builds the plan
    assert exe._fast, "this program should have a fast path"
    for seed in range(3):
        x, y = _inputs(seed)
        got = exe(x, y)
        _check(got, x, y)
        assert got[1] is not got[2] and got[3] is not y  # fresh arrays, as the slow path
    slow = exe._run(exe._check_inputs([x, y]))
    for f, s in zip(exe(x, y), slow, strict=True):
        np.testing.assert_array_equal(f, s)
    assert first[0].shape == (8,)


def test_fast_path_refuses_with_the_ordinary_errors():
    exe = accy.compile(_module(), use_cache=False)
    x, y = _inputs()
    exe(x, y)
    bad_inputs = [(x.astype(np.float64), y), (x[:4], y), (x,)]
    for args in bad_inputs:
        assert exe.call_fast(args) is None
        with pytest.raises(InputError) as fast_err:
            exe(*args)
        with pytest.raises(InputError) as slow_err:
            exe._check_inputs(list(args))
        assert str(fast_err.value) == str(slow_err.value)
    # a Fortran-ordered copy is not refused: the ordinary path makes it contiguous
    xt = np.asfortranarray(x)
    assert exe.call_fast((xt, y)) is None
    _check(exe(xt, y), x, y)


def test_fast_path_survives_close():
    exe = accy.compile(_module(), use_cache=False)
    x, y = _inputs()
    exe(x, y)
    exe.close()  # frees the temporaries whose addresses the plan held
    _check(exe(x, y), x, y)


def test_jit_fast_path_retraces_on_new_signatures():
    f = accy.jit(lambda a, b: anp.maximum(a * b, 0.25))
    a = np.linspace(0, 1, 256, dtype=np.float32)
    for _ in range(3):
        np.testing.assert_allclose(f(a, a), np.maximum(a * a, 0.25), rtol=1e-6)
    assert f.trace_count == 1
    b = np.linspace(0, 1, 16)  # float64, another shape: a new trace, not the fast path
    np.testing.assert_allclose(f(b, b), np.maximum(b * b, 0.25))
    np.testing.assert_allclose(f(a, a), np.maximum(a * a, 0.25), rtol=1e-6)
    assert f.trace_count == 2
    with pytest.raises(AccyError):
        f(a.astype(np.float16), a)  # refused as before (an accy error, not a crash)


def test_generated_fast_path_takes_read_only_inputs_and_refuses_other_types():
    exe = accy.compile(_module(), use_cache=False)
    x, y = _inputs()
    exe(x, y)
    x.setflags(write=False)  # no writable buffer: the address comes from the array interface
    got = exe.call_fast((x, y))
    assert got is not None
    _check(got, x, y)
    assert exe.call_fast((x.tolist(), y)) is None and exe.call_fast([x, y, y]) is None


def test_a_closed_executables_plan_refuses_and_jit_rebinds():
    f = accy.jit(lambda a, b: anp.sqrt(a * b + 1.0))
    a = np.linspace(0, 1, 64, dtype=np.float32)
    f(a, a)
    exe = f.compile(a, a)
    old = exe.fast_function()
    assert old((a, a)) is not None
    exe.close()  # frees the buffers the plan's pointers named
    assert old((a, a)) is None  # dead: never launches with freed addresses
    for _ in range(3):  # the jit notices, takes the ordinary path once and rebinds
        np.testing.assert_allclose(f(a, a), np.sqrt(a * a + 1.0), rtol=1e-6)
    assert exe.fast_function() is not old and exe.fast_function()((a, a)) is not None


def test_data_pointer_read_from_the_array_object_matches_numpy():
    from accy.runtime import fast_call

    base = np.arange(64, dtype=np.float64)
    arrays = [base, base[5:], base[::2].copy(), np.frombuffer(b"x" * 16, np.uint8),
              np.empty((3, 4), np.int32)]
    for arr in arrays:
        assert fast_call._address(arr) == arr.__array_interface__["data"][0]


def test_threads_calling_one_executable_get_their_own_results():
    import threading

    exe = accy.compile(_module(), use_cache=False)
    inputs = [_inputs(seed) for seed in range(4)]
    exe(*inputs[0])
    bad = []

    def work(k):
        x, y = inputs[k]
        for _ in range(200):
            got = exe(x, y)
            if not np.allclose(got[1], np.sqrt(np.abs(x)) + y, rtol=1e-6):
                bad.append(k)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not bad


def test_a_loop_that_writes_beside_two_parameters_gets_no_plan():
    # a loop launch that meets two parameters' buffers with one of them written could write
    # through an argument aliasing the other: such a program keeps the ordinary path
    from types import SimpleNamespace

    from accy.runtime.fast_call import _bind_loop

    flat = SimpleNamespace(origins=[(0, "buffer", 0), (1, "buffer", 1), (5, "own", 4)],
                           pairs=np.array([[0, 1]]))
    bound: list = []
    driver = SimpleNamespace(flat=flat, bind_call=lambda bufs: bound.append(bufs) or ("t", "r"))
    exe = SimpleNamespace(native_loop=lambda node: driver, own=lambda s: f"own{s}",
                          spare=lambda s: f"spare{s}", buffer=lambda s, b: f"buffer{s}",
                          graph=SimpleNamespace(param_slots=[0, 1]))
    binds, fixed = [(0, 0), (1, 1)], [(5, "own", 4)]
    assert _bind_loop(exe, None, binds, fixed, [64, 32], []) is None and not bound
    flat.pairs = np.array([[0, 2]])  # a parameter beside the loop's own buffer: bound
    held: list = []
    assert _bind_loop(exe, None, binds, fixed, [64, 32], held) == ("t", "r")
    assert bound == [[64, 32, "own4"]] and held == ["own4"]
