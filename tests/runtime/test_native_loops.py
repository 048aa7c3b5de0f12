"""The CPU backend's native loop driver (``accy_backend_cpu.loop_driver``): loop nodes run
in one native call, equal to numpy and to the launch-by-launch path of
``accy.runtime.sequence.run_loop``; launches big enough to split use a team of threads;
checks refuse what the per-launch checks refuse; a driver failure is an accy error and
releases the call's buffers."""

from __future__ import annotations

import gc
from types import SimpleNamespace

import accy
import accy.numpy as anp
import numpy as np
import pytest
from accy import lax
from accy.errors import InternalError, LaunchError
from accy.runtime.graph import GraphLaunch
from accy.runtime.loop_graph import LoopNode, Program
from accy.runtime.loop_plan import alias_facts, flatten_loop

RNG = np.random.default_rng(11)
X = RNG.random((5, 8), dtype=np.float32)


def _two_carries(x):
    def step(t, c):
        a, b = c
        b = b.at[1:-1].set(0.25 * (a[:-2] + 2.0 * a[1:-1] + a[2:]))
        return b, a + 1.0
    return lax.fori_loop(0, 5, step, (x, x * 2.0))


def _two_carries_np(x):
    a, b = x.copy(), x * 2.0
    for _ in range(5):
        b = b.copy()
        b[1:-1] = 0.25 * (a[:-2] + 2.0 * a[1:-1] + a[2:])
        a, b = b, a + 1.0
    return a, b


def _nested(x):
    def outer(i, y):
        return lax.fori_loop(0, 3, lambda j, z: z.at[j].set(z[j] * 0.5 + i + j), y)
    return lax.fori_loop(0, 4, outer, x)


def _nested_np(x):
    y = x.copy()
    for i in range(4):
        for j in range(3):
            y[j] = y[j] * np.float32(0.5) + i + j
    return y


def _while(x):
    return lax.while_loop(lambda c: c[0].sum() < 500.0, lambda c: (c[0] * 2.0, c[1] + 1),
                          (x, 0))


def _while_np(x):
    y, n = x.copy(), 0
    while y.sum() < 500.0:
        y, n = y * 2.0, n + 1
    return y, n


def _zero_trips(x):
    return lax.fori_loop(3, 3, lambda i, y: y * 3.0 + 1.0, x)


def _reduction(x):
    return lax.fori_loop(0, 6, lambda i, y: (y - y.mean(axis=0) * 0.5) / (y.max() + 1.0), x)


def _reduction_np(x):
    y = x.copy()
    for _ in range(6):
        y = (y - y.mean(axis=0) * np.float32(0.5)) / (y.max() + np.float32(1.0))
    return y


PROGRAMS = {
    "two_carries": (_two_carries, _two_carries_np),
    "nested": (_nested, _nested_np),
    "while": (_while, _while_np),
    "zero_trips": (_zero_trips, lambda x: x.copy()),
    "reduction": (_reduction, _reduction_np),
}


def _flat(out) -> list[np.ndarray]:
    return [np.asarray(o) for o in (out if isinstance(out, tuple) else (out,))]


def _drivers(exe) -> list:
    return [d for d in exe._native.values() if d]




@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_native_driver_equals_numpy_and_the_per_launch_path(name, monkeypatch):
    prog, ref = PROGRAMS[name]
    f = accy.jit(prog)
    exe = f.compile(X)
    got = _flat(f(X))
    drivers = _drivers(exe)
    assert len(drivers) == len(exe.graph.loops) and all(d.runs == 1 for d in drivers)
    for a, b in zip(got, _flat(ref(X)), strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    monkeypatch.setattr(exe.backend, "native_loops", False)
    exe.unbind()
    try:
        slow = _flat(f(X))
        assert not _drivers(exe)
        assert (exe._fast is False) == bool(exe.graph.loops)  # no native loop: no plan
    finally:
        monkeypatch.undo()
        exe.unbind()  # the executable is cached: let later tests bind drivers again
    for a, b in zip(got, slow, strict=True):
        np.testing.assert_array_equal(a, b)


def _stencil(a):
    def step(t, a):
        return a.at[1:-1, 1:-1].set(0.2 * (a[1:-1, 1:-1] + a[1:-1, :-2] + a[1:-1, 2:]
                                           + a[2:, 1:-1] + a[:-2, 1:-1]))
    return lax.fori_loop(0, 3, step, a)


def test_big_launches_split_over_a_team_of_threads(monkeypatch):
    from accy.plugins import open_backend

    pool = open_backend("cpu").pool
    pool.shutdown()  # the next team gets as many workers as num_threads says
    monkeypatch.setattr(pool, "num_threads", 3)  # more helpers than this machine has cores
    try:
        a = RNG.random((192, 192), dtype=np.float32)
        f = accy.jit(_stencil)
        got = f(a)
        (driver,) = _drivers(f.compile(a))
        assert driver.parallel and driver.runs == 1
        if pool._native:  # the helpers ran on the pool's native workers
            assert len(pool._native._box[0].threads) == 2
        want = a.copy()
        for _ in range(3):
            want[1:-1, 1:-1] = 0.2 * (want[1:-1, 1:-1] + want[1:-1, :-2] + want[1:-1, 2:]
                                      + want[2:, 1:-1] + want[:-2, 1:-1])
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-6)
    finally:
        pool.shutdown()


def _live_buffers(be) -> int:
    gc.collect()
    return be.live_objects()["buffers"]


def test_a_driver_failure_is_an_accy_error_and_releases_the_buffers():
    f = accy.jit(_reduction)
    exe = f.compile(X)
    f(X)
    (driver,) = _drivers(exe)
    be = exe.backend
    before = _live_buffers(be)
    good = driver.code[0]
    driver.code[0] = 99  # no such instruction
    try:
        with pytest.raises(InternalError, match="bad instruction at word 0"):
            f(X)
    finally:
        driver.code[0] = good
    assert _live_buffers(be) <= before  # the half-used workspace is dropped, not pooled
    np.testing.assert_allclose(np.asarray(f(X)), _reduction_np(X), rtol=1e-5, atol=1e-6)


def test_a_destroyed_kernel_is_a_launch_error_when_binding():
    f = accy.jit(_reduction)
    exe = f.compile(X)
    f(X)
    exe.unbind()
    name = next(ln.kernel for ln in exe.graph.loops[0].body.launches)
    loaded = exe._kernel(name)
    fn, loaded.function = loaded.function, None
    try:
        with pytest.raises(LaunchError, match="destroyed"):
            f(X)
    finally:
        loaded.function = fn
    np.testing.assert_allclose(np.asarray(f(X)), _reduction_np(X), rtol=1e-5, atol=1e-6)


def _kernels(*access: str) -> dict:
    bufs = [SimpleNamespace(name=f"b{i}", dtype="f32", access=a) for i, a in enumerate(access)]
    return {"k": SimpleNamespace(buffers=bufs)}


def test_alias_facts_refuse_a_written_buffer_bound_twice():
    # the carried result slot 2 double-buffers; the launch binds parameter 1 and result 2
    node = LoopNode(0, Program([GraphLaunch("k", 1, 32, (2, 1))]), bind=((1, 0),),
                    carry=((1, 2),), finals=(), trips=7)
    flat = flatten_loop(node, 3)
    assert alias_facts(flat, _kernels("write", "read")) is None
    kinds = {kind for _, kind, _ in flat.origins}
    assert kinds == {"buffer", "own", "spare"} and len(flat.pairs)
    bad = LoopNode(0, Program([GraphLaunch("k", 1, 32, (2, 2))]), bind=((1, 0),),
                   carry=((1, 2),), finals=(), trips=7)
    assert "twice" in alias_facts(flatten_loop(bad, 3), _kernels("write", "read"))


def test_overlapping_buffers_run_launch_by_launch():
    f = accy.jit(_two_carries)
    f(X)
    (driver,) = _drivers(f.compile(X))
    i, j = driver.flat.pairs[0]
    bufs = [np.zeros(64, np.uint8) for _ in driver.flat.origins]
    bufs[j] = bufs[i][:32]
    assert driver.run(bufs) is False and driver.runs == 1  # refused, nothing ran
    bufs[j] = np.zeros(64, np.float32)  # not a cpu buffer
    assert driver.run(bufs) is False


def test_scan_and_while_nest_in_one_driver():
    def f(x):
        def body(c):
            y, n = c
            y = lax.scan(lambda s, r: (s + r, s * 0.5), anp.zeros_like(y[0]), y)[1]
            return y + 1.0, n + 1
        return lax.while_loop(lambda c: c[1] < 3, body, (x, 0))

    y, n = accy.jit(f)(X)
    want = X.copy()
    for _ in range(3):
        s, rows = np.zeros_like(want[0]), []
        for r in want:
            rows.append(s * 0.5)
            s = s + r
        want = np.stack(rows) + 1.0
    assert int(n) == 3
    np.testing.assert_allclose(np.asarray(y), want, rtol=1e-5, atol=1e-6)


def test_the_driver_comes_with_the_program():
    f = accy.jit(_nested)
    exe = f.compile(X)
    f(X)
    (driver,) = _drivers(exe)
    name = exe.graph.loops[0].body.launches[0].kernel
    assert exe._kernel(name).driver is not None
    assert driver._run is exe._kernel(name).driver[0]  # not compiled in this process


def test_two_threads_share_the_team_without_deadlock():
    import threading

    a, b = (RNG.random((n, n), dtype=np.float32) for n in (192, 208))  # two executables
    f = accy.jit(_stencil)
    want = {n: None for n in (192, 208)}
    for x in (a, b):
        want[x.shape[0]] = np.asarray(f(x))
    got: dict[int, list] = {192: [], 208: []}

    def work(x):
        for _ in range(4):
            got[x.shape[0]].append(np.asarray(f(x)))

    threads = [threading.Thread(target=work, args=(x,)) for x in (a, b)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not any(t.is_alive() for t in threads)
    assert all(d.parallel for d in _drivers(f.compile(a)))
    for n, outs in got.items():
        assert len(outs) == 4
        for o in outs:
            np.testing.assert_array_equal(o, want[n])


def test_a_loop_run_by_another_thread_is_not_entered_twice():
    # the driver's pointer table and team are per loop: a second caller while one runs takes
    # the launch-by-launch path (False, nothing ran) instead of overwriting them
    f = accy.jit(_two_carries)
    f(X)
    (driver,) = _drivers(f.compile(X))
    runs = driver.runs
    with driver._busy:
        assert driver.run([np.zeros(64, np.uint8) for _ in driver.flat.origins]) is False
    assert driver.runs == runs
    for got, want in zip(f(X), _two_carries_np(X), strict=True):
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5, atol=1e-6)
    assert driver.runs == runs + 1


def test_helpers_submitted_before_the_pool_shut_down_are_waited_for(monkeypatch):
    # a shutdown between two helper submissions dropped the first helper's future: run()
    # then returned without waiting for a thread still reading the loop's team array
    from concurrent.futures import Future

    f = accy.jit(_two_carries)
    f(X)
    (driver,) = _drivers(f.compile(X))
    submitted: list[Future] = []

    class _ClosingExecutor:
        def submit(self, fn, *args):
            if submitted:
                raise RuntimeError("cannot schedule new futures after shutdown")
            done: Future = Future()
            done.set_result(None)
            submitted.append(done)
            return done

    pool = driver.backend.pool
    monkeypatch.setattr(pool, "num_threads", 3)
    monkeypatch.setattr(pool, "_pool", lambda: _ClosingExecutor())
    assert driver._start_helpers() == submitted and len(submitted) == 1


def _countdown(x, n):
    return lax.while_loop(lambda c: c[1] < n[0], lambda c: (c[0] * 0.5 + 1.0, c[1] + 1), (x, 0))


def test_loops_take_the_small_call_path_with_their_trip_counts():
    # the plan binds the driver once; each call writes its arrays' addresses into the
    # plan's own slot table and runs the loop natively (a while loop: as many trips as the
    # data says), into fresh results
    f = accy.jit(_countdown)
    n = np.array([3], np.int32)
    f(X, n)
    exe = f.compile(X, n)
    (driver,) = _drivers(exe)
    assert exe._fast
    runs, seen = driver.runs, []
    for trips in (0, 2, 7, 2):
        y, count = exe.call_fast((X, np.array([trips], np.int32)))
        want = X.copy()
        for _ in range(trips):
            want = want * np.float32(0.5) + np.float32(1.0)
        np.testing.assert_allclose(y, want, rtol=1e-6)
        assert int(count) == trips
        seen.append(y)
    assert driver.runs == runs + 4
    assert not np.shares_memory(seen[1], seen[3])
    assert exe.call_fast((X, np.array([2], np.int64))) is None  # not the parameter's dtype


def test_threads_calling_one_loop_program_get_their_own_results():
    # small calls and the ordinary path (a call that finds the executable's lock taken)
    # run the same loop with tables of their own: every thread gets its own input's result
    import threading

    f = accy.jit(_two_carries)
    inputs = [RNG.random((5, 8), dtype=np.float32) for _ in range(4)]
    wants = [_two_carries_np(x) for x in inputs]
    f(inputs[0])
    bad: list[int] = []

    def work(k):
        for _ in range(100):
            got = f(inputs[k])
            if not all(np.allclose(g, w, rtol=1e-5, atol=1e-6)
                       for g, w in zip(got, wants[k], strict=True)):
                bad.append(k)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not any(t.is_alive() for t in threads) and not bad
