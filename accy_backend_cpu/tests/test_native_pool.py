"""The CPU backend's native work-group pool: split kernel launches run by workers that wait
in native code (accy_backend_cpu.native_pool), hammered from many threads, shut down
during launches, after a kernel was destroyed, tiny and empty, forked and at exit."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import threading
import time

import numpy as np
import pytest
from accy.backend import Geometry
from accy.errors import LaunchError
from accy.kernel import KernelBuilder
from accy_backend_cpu.backend import CpuBackend
from accy_backend_cpu.native_call import native_calls_available
from accy_backend_cpu.native_pool import native_pool_available

from accy_backend_cpu import native_pool

pytestmark = pytest.mark.skipif(not (native_calls_available() and native_pool_available()),
                                reason="no native pool in this interpreter")
WG = 64


def _inc_kernel():
    """o[i] += 1 for i < n: every work-item run exactly once leaves ones."""
    kb = KernelBuilder("pool_inc", WG)
    o = kb.buffer("o", "i32", "write")
    n = kb.scalar("n", "i32")
    i = kb.global_id()
    with kb.if_(i < n):
        kb.store(o, i, o[i] + 1)
    return kb.build()


@pytest.fixture(scope="module")
def artifact():
    be = CpuBackend(num_threads=1)
    try:
        yield be.compile(_inc_kernel())
    finally:
        be.close()


def _backend(artifact, threads):
    be = CpuBackend(num_threads=threads)
    be.pool.min_items_per_thread = 1  # split everything that has two groups
    return be, be.load(artifact)


def _launch(be, loaded, n):
    buf = be.allocate(4 * n)
    buf.view(np.int32)[:] = 0
    be.launch(loaded, Geometry(-(-n // WG), WG), [buf], [("i32", n)])
    return buf.view(np.int32)


@pytest.mark.parametrize("threads", [1, 2, 4])
def test_split_launches_run_every_work_item_once(artifact, threads):
    be, loaded = _backend(artifact, threads)
    try:
        for n in (0, 1, WG, WG + 1, 7 * WG + 3, 1000 * WG):
            out = _launch(be, loaded, n)
            assert (out == 1).all(), (threads, n)
        native = be.pool._native
        if threads > 1:  # the native workers ran it, the Python pool never started
            assert native and len(native._box[0].threads) == threads - 1
            assert be.pool._executor is None
        pointers, run = be.bind_launch(loaded, Geometry(513, WG), [("i32", 513 * WG)])
        out = np.zeros(513 * WG, np.int32)
        pointers[0] = out.ctypes.data
        for _ in range(20):
            run()
        assert (out == 20).all()
    finally:
        be.close()


def test_many_threads_launch_at_once_and_the_pool_is_shut_down_meanwhile(artifact):
    be, loaded = _backend(artifact, 3)
    errors: list[BaseException] = []
    stop = threading.Event()

    def launcher(k: int) -> None:
        try:
            n = (k + 2) * 333
            pointers, run = be.bind_launch(loaded, Geometry(-(-n // WG), WG), [("i32", n)])
            out = np.zeros(n, np.int32)
            pointers[0] = out.ctypes.data
            for i in range(1, 101):
                run()
                out2 = _launch(be, loaded, n + i)
                assert (out2 == 1).all()
            assert (out == 100).all()
        except BaseException as e:  # reported by the main thread
            errors.append(e)

    def closer() -> None:
        while not stop.is_set():
            be.pool.shutdown()
            time.sleep(0.001)

    threads = [threading.Thread(target=launcher, args=(k,)) for k in range(8)]
    shut = threading.Thread(target=closer)
    shut.start()
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    stop.set()
    shut.join(60)
    be.close()
    assert not errors, errors[0]
    assert not any(t.is_alive() for t in be.pool._native._box[0].threads)


def test_a_destroyed_kernel_is_refused_and_shutdown_joins_the_workers(artifact):
    be, loaded = _backend(artifact, 2)
    pointers, run = be.bind_launch(loaded, Geometry(64, WG), [("i32", 64 * WG)])
    out = np.zeros(64 * WG, np.int32)
    pointers[0] = out.ctypes.data
    run()
    workers = list(be.pool._native._box[0].threads)
    be.destroy(loaded)
    with pytest.raises(LaunchError, match="destroyed"):
        run()
    with pytest.raises(LaunchError, match="destroyed"):
        be.launch(loaded, Geometry(64, WG), [be.allocate(4 * 64 * WG)], [("i32", 64 * WG)])
    be.close()
    assert workers and not any(t.is_alive() for t in workers)
    assert (out == 1).all()


def _wait_asleep(native, count):
    """Wait until ``count`` workers sleep (in the kernel or in Python); the word counting
    them and what a wake moves (the futex sequence, or the condition's generation)."""
    futex = bool(native._block.words[native_pool._FUTEX])
    word = native_pool._FUTEX_SLEEPERS if futex else native_pool._SLEEPERS
    deadline = time.monotonic() + 10
    while native._block.words[word] < count and time.monotonic() < deadline:
        time.sleep(0.005)
    assert native._block.words[word] == count
    return lambda: (int(native._block.words[native_pool._SEQ]) if futex
                    else native._box[0].gen)


def _cpu_ticks(thread):
    """User + system CPU clock ticks of ``thread`` (Linux /proc), or None."""
    try:
        with open(f"/proc/self/task/{thread.native_id}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return int(fields[11]) + int(fields[12])


@pytest.mark.parametrize("futex", [True, False])
def test_idle_workers_sleep_and_a_launch_wakes_them(artifact, futex, monkeypatch):
    if futex and not native_pool.futex_call():
        pytest.skip("no futex here")
    if not futex:
        monkeypatch.setattr(native_pool, "_FUTEX_CALL", 0)  # sleep in Python
    be, loaded = _backend(artifact, 3)
    try:
        assert (_launch(be, loaded, 100 * WG) == 1).all()
        native = be.pool._native
        moved = _wait_asleep(native, 2)
        before = moved()
        assert (_launch(be, loaded, 100 * WG) == 1).all()
        assert moved() == before + 1  # the launch woke them
        _wait_asleep(native, 2)
        workers = native._box[0].threads
        ticks = [_cpu_ticks(t) for t in workers]
        time.sleep(0.3)
        if None not in ticks:  # asleep: idle workers burn no CPU (a spinning one: ~30 ticks)
            assert all(_cpu_ticks(t) - n <= 3 for t, n in zip(workers, ticks, strict=True))
    finally:
        be.close()
    assert not any(t.is_alive() for t in native._box[0].threads)


def test_fork_and_interpreter_exit_with_spinning_workers(artifact):
    """A child forked after launches launches again (its own workers); the parent exits
    without close while its workers spin and a daemon thread keeps launching."""
    script = textwrap.dedent("""
        import os, sys
        import numpy as np
        from accy.backend import Geometry
        from accy_backend_cpu.backend import CpuBackend
        sys.path.insert(0, %r)
        from test_native_pool import _inc_kernel, _launch
        be = CpuBackend(num_threads=2)
        be.pool.min_items_per_thread = 1
        loaded = be.load(be.compile(_inc_kernel()))
        assert (_launch(be, loaded, 50 * 64) == 1).all()
        pid = os.fork()
        if pid == 0:
            ok = all((_launch(be, loaded, 50 * 64 + i) == 1).all() for i in range(20))
            os._exit(0 if ok and len(be.pool._native._box[0].threads) == 1 else 3)
        _, status = os.waitpid(pid, 0)
        assert os.waitstatus_to_exitcode(status) == 0, status
        assert (_launch(be, loaded, 50 * 64) == 1).all()
        import threading
        def forever():
            while True:
                _launch(be, loaded, 50 * 64)
        threading.Thread(target=forever, daemon=True).start()
        import time
        time.sleep(0.05)
        print("done")
    """) % str(__import__("pathlib").Path(__file__).parent)
    got = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         timeout=120)
    assert got.returncode == 0, got.stderr[-2000:]
    assert got.stdout.strip() == "done"


def test_native_calls_split_over_the_pool_from_many_threads(artifact):
    """bind_native_call with works: the launch goes through accy_pool_launch (workers
    started and woken by the trampoline's attention call), from 6 threads at once, while
    the pool is shut down now and then; a chain of a split and an inline launch."""
    from accy_backend_cpu.native_call import bind_native_call

    be, loaded = _backend(artifact, 3)
    n = 300 * WG + 5
    groups = -(-n // WG)
    f = bind_native_call(be, [(loaded, groups, [("i32", n)], [("arg", 0)]),
                              (loaded, groups, [("i32", n)], [("arg", 0)])],
                         False, works=[n, None])
    out = np.zeros(n, np.int32)
    assert f(out, None) is out and (out == 2).all()
    native = be.pool._native
    assert len(native._box[0].threads) == 2  # the first call started the workers
    moved = _wait_asleep(native, 2)
    before = moved()
    assert f(out, None) is out and (out == 4).all()
    assert moved() == before + 1  # the call woke them
    errors: list[BaseException] = []

    def caller() -> None:
        try:
            mine = np.zeros(n, np.int32)
            for i in range(1, 151):
                f(mine, None)
                if i % 50 == 0:
                    be.pool.shutdown()
            assert (mine == 300).all()
        except BaseException as e:  # reported by the main thread
            errors.append(e)

    threads = [threading.Thread(target=caller) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    be.close()
    assert not errors, errors[0]
    assert f(out, None) is out and (out == 6).all()  # after close: new workers
    be.close()


def test_native_code_that_does_not_build_leaves_the_python_pool(artifact, monkeypatch):
    from accy.errors import CodegenError

    def refuse(target):
        raise CodegenError("codegen: refused (test)")

    monkeypatch.setattr(native_pool, "_functions", refuse)
    be, loaded = _backend(artifact, 2)
    try:
        with pytest.warns(RuntimeWarning, match="native workers unavailable"):
            assert (_launch(be, loaded, 50 * WG) == 1).all()
        assert be.pool._native is False
        assert (_launch(be, loaded, 50 * WG) == 1).all()  # Python workers, no warning
    finally:
        be.close()
