"""A warm-cache first call in a new process is a lookup and a load: nothing is traced (the
jit index), no pass runs, and
neither llvmlite (when a linker made a shared object) nor importlib.metadata nor pathlib
(with urllib.parse and ipaddress, ~8 ms: the caches work on os.path strings) is imported."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

_SCRIPT = textwrap.dedent("""
    import json, sys
    import numpy
    import accy, accy.numpy as np

    def chain(x, y):
        t = x * y + x
        t = np.maximum(t / (np.abs(x) + 1.0), 0.25)
        return np.sqrt(t * t)

    f = accy.jit(chain, backend="cpu")
    x = numpy.linspace(0, 1, 256, dtype=numpy.float32); y = x + 1
    out = f(x, y)
    g = accy.jit(lambda v: accy.fori_loop(0, 3, lambda i, v: v * 0.5 + 1.0, v))
    looped = g(x)  # a loop node: its native driver comes with the program
    mods = sorted(m for m in sys.modules  # before numpy.testing, which imports metadata
                  if m.split(".")[0] in ("llvmlite", "pathlib", "platformdirs", "pluggy",
                                         "accy_backend_cuda", "hashlib")
                  or m.startswith(("importlib.metadata", "importlib.util", "accy.passes",
                                   "accy.kernel.ir")))
    t = numpy.maximum((x * y + x) / (numpy.abs(x) + 1), 0.25)
    numpy.testing.assert_allclose(out, numpy.sqrt(t * t), rtol=1e-6)
    numpy.testing.assert_allclose(looped, ((x * 0.5 + 1) * 0.5 + 1) * 0.5 + 1, rtol=1e-6)
    stats = f.compile(x, y).cache_stats
    print(json.dumps({"stats": stats, "modules": mods,
                      "traces": [f.trace_count, g.trace_count],
                      "index_hits": [f.index_hits, g.index_hits]}))
""")


def _run(env) -> dict:
    done = subprocess.run([sys.executable, "-c", _SCRIPT], env=env, capture_output=True,
                          text=True, check=False, timeout=300)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_warm_first_call_runs_no_pass_and_imports_no_llvmlite(tmp_path):
    from accy_backend_cpu.shared_object import linker_commands

    env = dict(os.environ, ACCY_CACHE_DIR=str(tmp_path / "cache"))
    env.pop("ACCY_DISABLE_DISK_CACHE", None)
    # a user's process: without the test plugins the root conftest adds (a broken plugin
    # keeps a full discovery from recording its backend table)
    env["PYTHONPATH"] = os.pathsep.join(
        p for p in env.get("PYTHONPATH", "").split(os.pathsep)
        if p and "accy-test-plugins-" not in p and os.path.join("tests", "plugins") not in p)
    cold = _run(env)
    assert "pipeline_hits" not in cold["stats"]
    warm = _run(env)
    assert warm["stats"].get("pipeline_hits") == 1 and warm["stats"].get("disk_hits") == 1
    assert not [m for m in warm["modules"] if m.startswith(("accy.passes", "importlib.meta"))]
    # the launch graphs keep their kernel IR apart: loading and running (a loop's native
    # driver included) reads only names, buffer specs and object code
    assert "accy.kernel.ir" not in warm["modules"]
    assert "pathlib" not in warm["modules"] and "platformdirs" not in warm["modules"]
    # the jit index knew both functions: nothing traced; no OpenSSL (hashlib) either
    assert warm["traces"] == [0, 0] and warm["index_hits"] == [1, 1]
    assert "hashlib" not in warm["modules"] and "importlib.util" not in warm["modules"]
    # the cold run's full discovery recorded that plugin 'cpu' provides backend 'cpu': the
    # warm one imports that plugin alone, without pluggy (accy.plugins.fast_backend)
    assert "pluggy" not in warm["modules"] and "accy_backend_cuda" not in warm["modules"]
    if linker_commands():
        assert not [m for m in warm["modules"] if m.startswith("llvmlite")]
    else:
        pytest.skip("no linker: the warm load uses MCJIT (llvmlite)")


def test_warm_first_call_without_a_linker_loads_object_code_into_mcjit(tmp_path):
    # no ld/cc on PATH: object code is cached, and the warm process, whose host info comes
    # from the disk cache, must still initialise LLVM before building the MCJIT engine
    env = dict(os.environ, ACCY_CACHE_DIR=str(tmp_path / "cache"), PATH=str(tmp_path))
    env.pop("ACCY_DISABLE_DISK_CACHE", None)
    _run(env)
    warm = _run(env)
    assert warm["stats"].get("pipeline_hits") == 1 and warm["stats"].get("disk_hits") == 1
    assert "llvmlite.binding" in warm["modules"]
    assert not list((tmp_path / "cache" / "artifacts").glob("*.so"))
