"""Benchmark: the PolyBench-style kernels under accy (JAX style: ``accy.fori_loop`` and
``.at[].set``) against numpy and numba, one run, ratios printed.

``python bench/programs.py [--size medium|small|test] [--backend cpu] [--only NAME,...]
[--repeat R]``

For each kernel of ``tests/programs/polybench``:

- **accy first**: a fresh ``accy.jit`` of the JAX-style version: trace, compile and run
  (``(compile)``: the part before the run: trace, passes, LLVM in the codegen workers, load)
  (compile caches disabled with ``ACCY_DISABLE_DISK_CACHE=1`` by default; ``--warm-cache``
  keeps them);
- **accy warm**: the best of ``--repeat`` further calls;
- **numpy**: the kernel as numpy users write it (``numpy_style``: Python time/k loops,
  in-place slice updates) on numpy arrays, best of ``--repeat``;
- **numba**: ``numba.njit`` of the loop-for-loop reference, best of ``--repeat`` after a
  compiling call (skipped with one line when numba is not installed).

Ratios are accy warm / numpy and accy warm / numba (< 1: accy is faster). ``--size medium``
is PolyBench's MEDIUM_DATASET except for the kernels whose inner loop is a sequential
scalar recurrence (seidel-2d, nussinov, adi: one device iteration per element, which runs
``n**2`` loop steps), which use the ``small`` extents; the table says which size ran. Results
are checked against the numpy version (max relative error printed).

Byte code is cached as in an ordinary install, even where the environment sets
``PYTHONDONTWRITEBYTECODE``: the packages are byte-compiled (``compileall``, into a
``PYTHONPYCACHEPREFIX``-style folder under the temporary directory) before anything is
timed, so the first kernel's "first call" does not include compiling accy's Python source
(~0.7 s of CPU for the modules the compile path imports lazily).
"""

from __future__ import annotations

import argparse
import compileall
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _bytecode_like_an_install() -> None:
    """Write and use byte code for accy's packages (pip byte-compiles at install time)."""
    if sys.dont_write_bytecode:
        sys.pycache_prefix = sys.pycache_prefix or os.path.join(tempfile.gettempdir(),
                                                                "accy-bench-pyc")
        sys.dont_write_bytecode = False
    for src in [*ROOT.glob("accy_*/src"), ROOT / "tests" / "programs"]:
        compileall.compile_dir(str(src), quiet=1, workers=1)


_bytecode_like_an_install()
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

from tests.programs.polybench import jax_style, numpy_style, reference  # noqa: E402
from tests.programs.polybench.inputs import NAMES, inputs  # noqa: E402

#: kernels whose JAX-style version runs a device iteration per matrix element
SCALAR_RECURRENCES = ("seidel_2d", "nussinov", "adi")


def _best(fn: Callable[[], object], repeat: int) -> tuple[float, object]:
    best, out = float("inf"), None
    for _ in range(max(1, repeat)):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return best, out


def _numba(name: str) -> Callable | None:
    try:
        import numba
    except ImportError:
        return None
    return numba.njit(cache=False)(getattr(reference, name))


def _err(got, want) -> float:
    g = got if isinstance(got, tuple) else (got,)
    w = want if isinstance(want, tuple) else (want,)
    worst = 0.0
    for a, b in zip(g, w, strict=True):
        a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
        scale = max(float(np.abs(b).max()), 1e-30) if b.size else 1.0
        worst = max(worst, float(np.abs(a - b).max()) / scale if b.size else 0.0)
    return worst


def _rank_part(out: tuple) -> tuple:
    """gramschmidt's ``(A, R, Q)`` cut to its well-conditioned part: Q's first min(m, n)
    columns and R's first min(m, n) rows. With m < n (PolyBench MEDIUM: 200 x 240) the later
    columns are orthogonalised rounding noise: numpy in f32 and in f64 differ there by a
    relative 1.08, so no f32 implementation can be compared on them."""
    _, r, q = (np.asarray(x) for x in out)
    k = min(q.shape)
    return r[:k], q[:, :k]


def run(name: str, size: str, backend: str, repeat: int) -> dict:
    import accy

    used = "small" if size == "medium" and name in SCALAR_RECURRENCES else size
    args = inputs(name, used)
    t0 = time.perf_counter()
    f = accy.jit(getattr(jax_style, name), backend=backend)
    f.compile(*args)  # the first call's trace, passes, LLVM and load, timed on their own
    compiled = time.perf_counter() - t0
    first_out = f(*args)
    first = time.perf_counter() - t0
    warm, _ = _best(lambda: f(*inputs(name, used)), repeat)
    np_time, want = _best(lambda: numpy_style.__dict__[name](*inputs(name, used)), repeat)
    if name == "gramschmidt":  # MEDIUM has m < n: columns past m are rounding noise (plain
        first_out, want = (_rank_part(r) for r in (first_out, want))  # numpy f32 vs f64
    row = {"name": name, "size": used, "first": first, "compile": compiled, "warm": warm,
           "numpy": np_time,
           "err": _err(first_out, want), "numba": None}
    nb = _numba(name)
    if nb is not None:
        try:
            nb(*inputs(name, used))
        except Exception as e:  # numba cannot type every numpy program (helper calls, ...)
            row["numba_error"] = type(e).__name__
        else:
            row["numba"], _ = _best(lambda: nb(*inputs(name, used)), repeat)
    return row


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", default="medium", choices=["medium", "small", "test"])
    ap.add_argument("--backend", default="cpu")
    ap.add_argument("--only", default="")
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--warm-cache", action="store_true")
    args = ap.parse_args(argv)
    if not args.warm_cache:
        os.environ["ACCY_DISABLE_DISK_CACHE"] = "1"
    names = [n for n in NAMES if not args.only or n in args.only.split(",")]
    try:
        import numba  # noqa: F401
    except ImportError:
        print("numba not installed: the numba column is skipped (pip install numba)")
    print("load average " + " ".join(f"{v:.2f}" for v in os.getloadavg()))
    print(f"{'kernel':16} {'size':7} {'accy first':>11} {'(compile)':>10} {'accy warm':>10} "
          f"{'numpy':>9} "
          f"{'numba':>9} {'warm/np':>8} {'warm/nb':>8} {'rel err':>8}")
    wins = na = 0
    for name in names:
        r = run(name, args.size, args.backend, args.repeat)
        nb = (f"{r['numba']:9.4f}" if r["numba"] is not None
              else f"{'n/a' if 'numba_error' in r else '-':>9}")
        ratio_nb = f"{r['warm'] / r['numba']:8.2f}" if r["numba"] else f"{'-':>8}"
        wins += r["warm"] <= r["numpy"]
        na += "numba_error" in r
        print(f"{name:16} {r['size']:7} {r['first']:11.3f} {r['compile']:10.3f} {r['warm']:10.4f} "
              f"{r['numpy']:9.4f} {nb} {r['warm'] / r['numpy']:8.2f} {ratio_nb} "
              f"{r['err']:8.1e}", flush=True)
    print(f"accy warm <= numpy on {wins} of {len(names)} kernels")
    if na:
        print("numba n/a: its nopython mode could not compile that numpy-style program as written")


if __name__ == "__main__":
    main()
