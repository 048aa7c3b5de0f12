"""Benchmark: compilation time of accy programs, one run, ratios printed.

``python bench/compile.py [--only CASE,...] [--steps N] [--backend cpu]``

Every case runs in a fresh Python process (imports done before the clock starts), so a
"first call" includes everything a user's first call pays: tracing, the pass pipeline,
LLVM, loading and the run itself.

- **cold**: the first call of a 9-op elementwise chain (256 f32) with an empty cache
  directory, against numba's first call of the same chain (``@njit``, no cache) when numba
  is installed (``pip install accy-core[bench]``);
- **warm**: the same first call in a new process whose cache directory the cold run filled
  (target: ≤ 20 ms), in ``--warm-runs`` fresh processes (default 7): the line gives the
  median wall and CPU seconds, its notes the fastest (``best_s``); they count the modules
  the call imported (``imports``, of them accy's ``accy_imports``), say whether llvmlite or
  importlib.metadata were among them, and how the jit found the program (``traces`` 0 and
  ``index_hits`` 1: the jit index knew it, so nothing was traced; see ``docs/caches.md``);
- **warm-parts**: where a warm first call's time goes, the median of ``--warm-runs`` more
  fresh processes that import the warm path's modules before the clock (``imports``: their
  import time, which a plain warm call pays inside its first call) and time its steps:
  ``key`` (the jit index key: the function's key and accy's source fingerprint), ``index``
  (reading the index entry), ``open`` (opening the backend), ``graph`` (the pipeline key and
  reading the launch graph), ``load`` (reading and loading the program's object code), ``exe`` (the
  executable and its small-call function), ``run`` (the launch itself), ``other`` (the
  rest: the jit's own bookkeeping), all in milliseconds;
- **ops5000**: a jacobi-1d whose time loop Python unrolls at trace time (~5,000 traced ops),
  empty cache (issue 11 target: < 10 s on the 2-core machine);
- **jacobi2d**: a 1000-step jacobi-2d on 256×256 with ``accy.fori_loop``, first call with an
  empty cache (target: < 2 s);
- **cavity**: ``tests/programs/real`` ``cavity_flow`` (41×41, nt=20) with ``--nit`` pressure
  sweeps per step, all unrolled by Python at trace time (nit=50: ~75,000 traced ops, 4,200
  kernels of 14 distinct codes), empty cache; ``--nit 5,10,20,50`` prints the growth;
- **transformer**: ``accy.compile`` + first call of the ``transformer_block`` workload
  (16×32, 25 kernels), empty cache.

Prints one line per case: wall seconds of the timed region, the CPU seconds of the calling
process over the timed region ( the codegen worker's CPU is not counted: a loaded
machine stretches the wall clock much more than CPU time), and the ratio to numba's first
call where there is one.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import textwrap

CHAIN = """
def chain(x, y):
    t = x * y
    t = t + x
    t = t - y
    t = t * 0.5
    t = t / (np.abs(x) + 1.0)
    t = np.maximum(t, 0.25)
    t = np.minimum(t, 4.0)
    return np.sqrt(t * t)
"""

CASES = {
    "cold": """
import accy, accy.numpy as np
exec(CHAIN)
f = accy.jit(chain, backend=BACKEND)
x = numpy.linspace(0, 1, 256, dtype=numpy.float32); y = x + 1
t0 = time.perf_counter(); f(x, y); dt = time.perf_counter() - t0
""",
    "numba": """
import numba
np = numpy
exec(CHAIN)
f = numba.njit(chain)
x = numpy.linspace(0, 1, 256, dtype=numpy.float32); y = x + 1
t0 = time.perf_counter(); f(x, y); dt = time.perf_counter() - t0
""",
    "ops5000": """
import accy
def jac(A, B):
    for _ in range(STEPS):
        B[1:-1] = 0.33333 * (A[:-2] + A[1:-1] + A[2:])
        A[1:-1] = 0.33333 * (B[:-2] + B[1:-1] + B[2:])
    return A, B
f = accy.jit(jac, backend=BACKEND)
A = numpy.linspace(0, 1, 400, dtype=numpy.float32); B = A + 1
t0 = time.perf_counter(); f(A, B); dt = time.perf_counter() - t0
extra = {"ops": len(f.lower(A, B).functions[0].body.ops), "kernels": f.compile(A, B).kernel_count}
""",
    "jacobi2d": """
import accy
from accy import lax
def five(A):
    return 0.2 * (A[1:-1, 1:-1] + A[1:-1, :-2] + A[1:-1, 2:] + A[2:, 1:-1] + A[:-2, 1:-1])
def jac(A, B):
    def step(t, c):
        A, B = c
        B = B.at[1:-1, 1:-1].set(five(A))
        A = A.at[1:-1, 1:-1].set(five(B))
        return A, B
    return lax.fori_loop(0, 1000, step, (A, B))
f = accy.jit(jac, backend=BACKEND)
A = numpy.random.default_rng(0).random((256, 256), dtype=numpy.float32); B = A.copy()
t0 = time.perf_counter(); f(A, B); dt = time.perf_counter() - t0
""",
    "cavity": """
import accy
sys.path.insert(0, ROOT)
from tests.programs.real import cases, programs
args = list(cases.inputs("cavity_flow", "bench")); args[4] = NIT
f = accy.jit(programs.cavity_flow, backend=BACKEND)
t0 = time.perf_counter(); f(*args); dt = time.perf_counter() - t0
args = list(cases.inputs("cavity_flow", "bench")); args[4] = NIT
extra = {"nit": NIT, "ops": len(f.lower(*args).functions[0].body.ops),
         "kernels": f.compile(*args).kernel_count}
""",
    "transformer": """
import accy
from accy.profiling import workloads
w = workloads.build("transformer_block", 16, 32)
t0 = time.perf_counter()
exe = accy.compile(w.module, backend=BACKEND); exe(*w.inputs)
dt = time.perf_counter() - t0
extra = {"kernels": exe.kernel_count}
""",
}
# the warm case also says what the timed region imported: the modules (count, and how many
# of them accy's own), and whether llvmlite and importlib.metadata were among them (a
# linked program loads with dlopen; the entry-point table comes from the cache)
CASES["warm"] = CASES["cold"].replace("t0 = time.perf_counter()", "before = set(sys.modules)\n"
                                      "t0 = time.perf_counter()") + """
new = set(sys.modules) - before
extra = {"imports": len(new), "accy_imports": sum(m.split(".")[0].startswith("accy")
                                                  for m in new),
         "llvmlite": any(m.startswith("llvmlite") for m in new),
         "metadata": "importlib.metadata" in new,
         "traces": f.trace_count, "index_hits": f.index_hits}
"""

# warm-parts: the warm call with its steps timed (milliseconds of wall time per step; the
# modules of the warm path imported, and timed, before the clock starts)
CASES["warm-parts"] = """
import importlib
import accy, accy.numpy as np
mods = ["accy.frontend.jit_index", "accy.frontend.fn_key", "accy.runtime.artifact_cache",
        "accy.config", "accy.runtime.pipeline_cache", "accy.runtime.compiler", "accy.plugins",
        "accy.runtime.graph", "accy.runtime.executable"]
i0 = time.perf_counter()
for m in mods:
    importlib.import_module(m)
for m in ["accy.plugins.fast_backend", "accy.plugins.entry_cache", f"accy_backend_{BACKEND}",
          f"accy_backend_{BACKEND}.plugin", f"accy_backend_{BACKEND}.backend"]:
    try:  # the backend's plugin modules (an installed backend of another layout: not)
        importlib.import_module(m)
    except ImportError:
        pass
imports = time.perf_counter() - i0
import accy.runtime.compiler as comp
from accy.frontend import jit_index
from accy.runtime import pipeline_cache
from accy.runtime.executable import Executable
parts, stack = {}, [0.0]  # stack: time of the timed calls inside the current one
def timed(owner, name, part):
    fn = getattr(owner, name)
    def wrapper(*a, **k):
        t = time.perf_counter()
        stack.append(0.0)
        try:
            return fn(*a, **k)
        finally:
            inner, spent = stack.pop(), time.perf_counter() - t
            stack[-1] += spent
            parts[part] = parts.get(part, 0.0) + spent - inner  # its own time only
    setattr(owner, name, wrapper)
timed(jit_index, "index_key", "key"); timed(jit_index, "load", "index")
timed(accy.plugins, "open_backend", "open"); timed(pipeline_cache, "load_graph", "graph")
timed(pipeline_cache, "pipeline_key", "graph")
timed(comp, "load_kernels", "load"); timed(comp, "_executable", "exe+load")
timed(Executable, "fast_function", "fast")
exec(CHAIN)
f = accy.jit(chain, backend=BACKEND)
x = numpy.linspace(0, 1, 256, dtype=numpy.float32); y = x + 1
t0 = time.perf_counter(); f(x, y); dt = time.perf_counter() - t0
parts["exe"] = parts.pop("exe+load", 0.0) + parts.pop("fast", 0.0)
t1 = time.perf_counter(); f(x, y); parts["run"] = time.perf_counter() - t1
parts["other"] = dt - sum(v for k, v in parts.items() if k != "run")
extra = {"imports": round(imports * 1e3, 2),
         **{k: round(parts.get(k, 0.0) * 1e3, 2) for k in
            ("key", "index", "open", "graph", "load", "exe", "run", "other")}}
"""

PRELUDE = "import json, sys, time, numpy\nextra = {}\n"
START_CPU = "c0 = time.process_time()"
STOP_CPU = "cpu = time.process_time() - c0"
EPILOGUE = "\nprint(json.dumps({'s': dt, 'cpu': cpu, **extra}))\n"


def run_case(name: str, cache: str, backend: str, steps: int, pyc: str,
             nit: int = 50) -> dict:
    """Run case ``name`` in a fresh interpreter with ``ACCY_CACHE_DIR=cache``; returns its
    JSON line (``s``: seconds of the timed region). Byte code is cached under ``pyc``
    (``PYTHONPYCACHEPREFIX``) as in an ordinary install, even where the environment sets
    ``PYTHONDONTWRITEBYTECODE``."""
    case = textwrap.dedent(CASES[name])
    case = case.replace("t0 = time.perf_counter()", f"t0 = time.perf_counter(); {START_CPU}")
    stop = "dt = time.perf_counter() - t0"
    case = case.replace(stop, f"{stop}; {STOP_CPU}")
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    setup = (f"BACKEND = {backend!r}\nSTEPS = {steps}\nNIT = {nit}\nCHAIN = {CHAIN!r}\n"
             f"ROOT = {root!r}\n")
    code = PRELUDE + setup + case + EPILOGUE
    env = dict(os.environ, ACCY_CACHE_DIR=cache, PYTHONPYCACHEPREFIX=pyc)
    for var in ("ACCY_DISABLE_DISK_CACHE", "PYTHONDONTWRITEBYTECODE"):
        env.pop(var, None)
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         check=False)
    if out.returncode:
        return {"error": (out.stderr.strip().splitlines() or ["?"])[-1]}
    return json.loads(out.stdout.strip().splitlines()[-1])


def _median_of(runs: list[dict]) -> dict:
    """The median run: its wall and CPU seconds the medians of all runs (``s``, ``cpu``),
    with the fastest wall time in ``best_s`` (an error if every run failed)."""
    ok = [r for r in runs if "error" not in r]
    if not ok:
        return runs[0]
    walls = sorted(r["s"] for r in ok)
    med = dict(sorted(ok, key=lambda r: r["s"])[len(ok) // 2])
    med["cpu"] = sorted(r["cpu"] for r in ok)[len(ok) // 2]
    med["best_s"] = round(walls[0], 4)
    med["runs"] = len(ok)
    return med


def _median_parts(runs: list[dict]) -> dict:
    """Each step's median over ``runs`` (``warm-parts``), wall and CPU too."""
    ok = [r for r in runs if "error" not in r]
    if not ok:
        return runs[0]
    return {k: sorted(r[k] for r in ok)[len(ok) // 2] for k in ok[0]} | {"runs": len(ok)}


TEST_PLUGINS = ("accy-example-family", "accy-broken-plugin")
"""The test-only plugins under ``tests/plugins/``: the root conftest registers them for a
test run; a user's install (``scripts/setup.sh``, the wheels) has none of them."""


def installed_test_plugins() -> list[str]:
    """Return the test-only plugin distributions installed in this interpreter (a stale
    development venv): a warm first call would import them, so the figure would not be a
    user's."""
    import importlib.metadata

    found = []
    for name in TEST_PLUGINS:
        try:
            importlib.metadata.distribution(name)
        except importlib.metadata.PackageNotFoundError:
            continue
        found.append(name)
    return found


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", default="", help="comma-separated cases")
    ap.add_argument("--backend", default="cpu")
    ap.add_argument("--steps", type=int, default=156, help="ops5000: unrolled time steps")
    ap.add_argument("--warm-runs", type=int, default=7,
                    help="warm: fresh processes (the median is printed)")
    ap.add_argument("--nit", default="50",
                    help="cavity: comma-separated pressure sweeps per time step")
    args = ap.parse_args()
    order = ["cold", "warm", "warm-parts", "numba", "ops5000", "jacobi2d", "cavity",
             "transformer"]
    only = [c for c in args.only.split(",") if c] or order
    results: dict[str, dict] = {}
    with tempfile.TemporaryDirectory(prefix="accy-bench-compile-") as root:
        chain_cache = os.path.join(root, "chain")
        pyc = os.path.join(root, "pyc")
        run_case("cold", os.path.join(root, "prime"), args.backend, args.steps, pyc)
        for name in order:
            warm_wanted = "warm" in only or "warm-parts" in only
            if name not in only and not (name == "cold" and warm_wanted) and not (
                    name == "warm-parts" and "warm" in only):
                continue
            if name == "numba":
                try:
                    import numba  # noqa: F401
                except ImportError:
                    results[name] = {"error": "numba not installed (pip install accy-core[bench])"}
                    continue
            cache = chain_cache if name in ("cold", "warm", "warm-parts") else os.path.join(
                root, name)
            if name == "cavity":
                for nit in (int(n) for n in args.nit.split(",")):
                    results[f"cavity{nit}"] = run_case(name, f"{cache}{nit}", args.backend,
                                                       args.steps, pyc, nit)
                continue
            if name in ("warm", "warm-parts"):
                runs = [run_case(name, cache, args.backend, args.steps, pyc)
                        for _ in range(max(1, args.warm_runs))]
                results[name] = (_median_of if name == "warm" else _median_parts)(runs)
                continue
            results[name] = run_case(name, cache, args.backend, args.steps, pyc)
    numba_s = results.get("numba", {}).get("s")
    print(f"{'case':<12} {'seconds':>9} {'cpu s':>7}  notes")
    for name in [n for o in order for n in results if n == o or (
            o == "cavity" and n.startswith("cavity"))]:
        r = results[name]
        if "error" in r:
            print(f"{name:<12} {'-':>9} {'-':>7}  {r['error']}")
            continue
        notes = " ".join(f"{k}={v}" for k, v in r.items() if k not in ("s", "cpu"))
        if name in ("cold", "warm") and numba_s:
            notes += f" accy/numba-first={r['s'] / numba_s:.2f}"
        print(f"{name:<12} {r['s']:9.4f} {r['cpu']:7.3f}  {notes}")
    stale = installed_test_plugins()
    if stale:
        print(f"warning: test-only plugins installed here ({', '.join(stale)}): every first "
              "call imports them, a user's does not; `pip uninstall` them or rerun "
              "scripts/setup.sh before taking figures")


if __name__ == "__main__":
    main()
