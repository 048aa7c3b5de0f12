"""What may be called from several threads at once (docs/runtime.md, "Threads"): the op
registry's first use, one ``@accy.jit`` function's first calls, ``accy.compile`` of one
module; and what a prepared launch does once its kernel was destroyed (``LaunchError``,
never a jump into freed code).

Each stress runs in a fresh interpreter under ``-X faulthandler``: the races are at first
use (nothing loaded or cached yet), and a regression that crashes must fail one test, not
kill the worker that runs the suite.
"""

from __future__ import annotations

import subprocess
import sys

import accy
import accy.numpy as anp
import numpy as np
import pytest
from accy import lax
from accy.errors import LaunchError


def _run(script: str) -> str:
    proc = subprocess.run([sys.executable, "-X", "faulthandler", "-c", script],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc.stdout.strip()


_OPS = """
import threading
from accy.ir.ops.registry import get_op_def
gate, bad = threading.Barrier(8), []

def look():
    gate.wait()
    try:
        get_op_def("math.sin")
    except Exception as e:
        bad.append(repr(e))

threads = [threading.Thread(target=look) for _ in range(8)]
for t in threads:
    t.start()
for t in threads:
    t.join()
print(bad or "ok")
"""


def test_threads_meeting_the_op_registry_first_see_every_op():
    # the registry imported its op modules on first use after setting its "loaded" flag: a
    # second thread then met a half-filled registry ("unknown op 'math.sin'" when Dask's
    # threads traced their first blocks at once)
    assert _run(_OPS) == "ok"


_JIT = """
import threading
import numpy as np
import accy, accy.numpy as anp
from accy import lax

def small(x, y):
    return anp.sin(x) * y + 1.0

def looped(x):  # a loop node: the native loop driver and its per-executable table
    return lax.fori_loop(0, 4, lambda i, c: c * 0.5 + 1.0, x)

f, g = accy.jit(small), accy.jit(looped)
x = np.linspace(0, 1, 256, dtype=np.float32)
want_f = np.sin(x) * x + 1.0
want_g = x.copy()
for _ in range(4):
    want_g = want_g * np.float32(0.5) + np.float32(1.0)
gate, bad, exes = threading.Barrier(6), [], set()

def work():
    gate.wait()
    try:
        for _ in range(10):
            np.testing.assert_allclose(f(x, x), want_f, rtol=1e-5, atol=1e-6)
            np.testing.assert_allclose(g(x), want_g, rtol=1e-5, atol=1e-6)
        exes.add(id(f.compile(x, x)))
    except Exception as e:
        bad.append(repr(e))

threads = [threading.Thread(target=work) for _ in range(6)]
for t in threads:
    t.start()
for t in threads:
    t.join()
print(bad or (f.trace_count + f.index_hits, g.trace_count + g.index_hits, len(exes)))
"""


def test_threads_calling_one_jitted_function_first_trace_and_compile_it_once():
    assert _run(_JIT) == "(1, 1, 1)"


_COMPILE = """
import threading
import accy
from accy.runtime.compiler import clear_memory_cache

import numpy as np
clear_memory_cache()
module = accy.jit(lambda x: x * x + 2.0).lower(np.ones(64, np.float32))
gate, got = threading.Barrier(4), []

def work():
    gate.wait()
    got.append(accy.compile(module, backend="cpu"))

threads = [threading.Thread(target=work) for _ in range(4)]
for t in threads:
    t.start()
for t in threads:
    t.join()
print(len({id(e) for e in got}), got[0] is accy.compile(module, backend="cpu"))
"""


def test_threads_compiling_one_module_at_once_get_the_one_executable_kept():
    # the second executable stored used to replace the first: callers held different ones
    assert _run(_COMPILE) == "1 True"


_SHARED = """
import threading
import numpy as np
import accy, accy.numpy as anp
from accy import lax

f = accy.jit(lambda x, y: anp.sin(x) * y + 1.0)
g = accy.jit(lambda x: lax.fori_loop(0, 3, lambda i, c: c * 0.5 + x, x))
n = 512
exe_f = f.compile(np.ones(n, np.float32), np.ones(n, np.float32))
exe_g = g.compile(np.ones(n, np.float32))
gate, bad = threading.Barrier(6), []

def work(t):
    # each thread its own inputs: the small-call plan's argument arrays and the native
    # loop's address table are the executable's, shared by every caller
    rng = np.random.default_rng(t)
    gate.wait()
    try:
        for _ in range(200):
            x = rng.random(n, dtype=np.float32)
            np.testing.assert_allclose(exe_f(x, x)[0], np.sin(x) * x + 1.0, rtol=1e-5)
            c = x.copy()
            for _ in range(3):
                c = c * np.float32(0.5) + x
            np.testing.assert_allclose(exe_g(x)[0], c, rtol=1e-5)
    except Exception as e:
        bad.append(repr(e)[:300])

threads = [threading.Thread(target=work, args=(t,)) for t in range(6)]
for t in threads:
    t.start()
for t in threads:
    t.join()
print(bad[0] if bad else "ok")
"""


def test_threads_calling_one_executable_with_their_own_inputs_get_their_own_results():
    assert _run(_SHARED) == "ok"


def _destroy_all(exe) -> None:
    be = exe.backend
    for name in exe.graph.kernels:
        be.destroy(exe._kernel(name))


def test_a_destroyed_kernel_fails_the_small_call_plan_with_a_launch_error():
    # the plan's bound launch holds the kernel's code alive; once the kernel is destroyed
    # it must refuse to run rather than run (or jump into) code nobody owns
    f = accy.jit(lambda x, y: x * y + 1.0)
    x = np.ones(64, np.float32)
    exe = accy.compile(f.lower(x, x), backend="cpu", use_cache=False)
    np.testing.assert_allclose(exe(x, x)[0], x * x + 1.0)  # builds the plan
    assert exe._fast
    _destroy_all(exe)
    with pytest.raises(LaunchError, match="destroyed"):
        exe(x, x)
    exe.close()  # released: the next call loads the kernels again
    np.testing.assert_allclose(exe(x, x)[0], x * x + 1.0)


def test_a_destroyed_kernel_fails_the_native_loop_with_a_launch_error():
    x = np.linspace(0, 1, 64, dtype=np.float32)
    f = accy.jit(lambda x: lax.fori_loop(0, 3, lambda i, c: anp.sin(c) + 1.0, x))
    exe = accy.compile(f.lower(x), backend="cpu", use_cache=False)
    want = x.copy()
    for _ in range(3):
        want = np.sin(want) + np.float32(1.0)
    np.testing.assert_allclose(exe(x)[0], want, rtol=1e-5)
    assert any(exe._native.values())  # the native driver ran it
    _destroy_all(exe)
    with pytest.raises(LaunchError, match="destroyed"):
        exe(x)
    exe.close()
    np.testing.assert_allclose(exe(x)[0], want, rtol=1e-5)


def test_a_family_kernel_that_loses_the_load_race_is_released():
    # two threads loading one family kernel: the second one stored gets the first, and the
    # one it loaded itself is destroyed at once (a device pipeline would wait for GC)
    from accy.backend import RecordingBackend
    from accy.families import runner
    from accy.kernel import KernelBuilder

    kb = KernelBuilder("race_copy", 64)
    y, x = kb.buffer("y", "f32", "write"), kb.buffer("x", "f32", "read")
    i = kb.global_id()
    kb.store(y, i, x[i])
    kernel = kb.build()
    be = RecordingBackend()
    real = be.load

    def load_after_another_thread(artifact):
        be.load = real
        first.append(runner._load(be, kernel))  # another thread gets there first
        return real(artifact)

    first: list = []
    be.load = load_after_another_thread
    got = runner._load(be, kernel)
    assert got is first[0] is runner._load(be, kernel)
    assert be.live_objects()["kernels"] == 1


def test_a_call_while_another_thread_closes_the_executable_never_keeps_released_kernels():
    # close() cleared the small-call plan under the lock but released the kernels after it:
    # a call in between built a new plan on the kernels about to be destroyed, and every
    # later call raised LaunchError ("the kernel was destroyed")
    import threading

    f = accy.jit(lambda x, y: x * y + 2.0)
    x = np.ones(64, np.float32)
    exe = accy.compile(f.lower(x, x), backend="cpu", use_cache=False)
    exe(x, x)
    res, real, calls, helpers = exe._res, exe._res.release, [], []

    def release_with_a_call_in_between():
        t = threading.Thread(target=lambda: calls.append(exe(x, x)[0]))
        t.start()
        t.join(0.3)  # it runs now if close() let go of the lock, else once close is done
        real()
        helpers.append(t)

    res.release = release_with_a_call_in_between
    exe.close()
    helpers[0].join()
    np.testing.assert_allclose(calls[0], x * x + 2.0)
    np.testing.assert_allclose(exe(x, x)[0], x * x + 2.0)


_KEPT = """
import gc
import numpy as np, accy
from accy.runtime import Executable

x = np.full((256, 256), 0.01, np.float32)  # temporaries of 256 KiB: freed pages unmap
f = accy.jit(lambda x: (x @ x) @ x + 1.0)
base = accy.compile(f.lower(x), backend="cpu", use_cache=False)
exe = Executable(base.backend, base.graph, base._loaded)  # kernels shared, as a family's
want = exe(x)[0]
call = exe.fast_function()
del exe
gc.collect()  # its finalizer frees the temporaries the plan's pointer arrays point into
out = call((x,))
print(out is None or np.allclose(out[0], want))
"""


def test_a_small_call_function_kept_after_its_executable_was_collected_does_not_crash():
    # the plan held only the addresses of its executable's temporaries: called after the
    # executable was collected, its kernels wrote into freed memory (a segfault)
    assert _run(_KEPT) == "True"
