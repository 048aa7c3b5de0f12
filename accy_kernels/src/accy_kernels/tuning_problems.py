"""Problems the family sweeps time (``accy tune --families``), with their references.

:func:`problems` (family metadata ``tuning_problems``) returns the
:class:`~accy.tuning.family_sweep.FamilyProblem` list of one family for a backend: every
dtype the family supports (those the backend has), on the fixed default size
(:data:`DEFAULT_N` elements; SpMV/SpMM 2**16 rows x 16 entries, matmul 512**3) and on the
sizes a workload asks for (``sizes``). Each problem carries the keyword arguments of the
variants' ``run(backend, candidate, **kwargs)``, its tuning key
(:mod:`accy_kernels.tuning_keys`), the variant an untuned call would run (the API's
heuristic) and a check of a candidate's result against the family's numpy/scipy reference
(:mod:`accy_kernels.references`; random streams against the numpy Random123/Squares
bijections). Inputs are deterministic (seeded), so sweeps are repeatable.

The random family is swept in five configurations: Philox4x32-10, Philox4x32-7,
Threefry2x32-20, Threefry2x32-13 and Squares (uniform f32); only work-group sizes are
tuned (the values never depend on them), each configuration under its own key.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import numpy as np
from accy.tuning.family_sweep import FamilyProblem

from accy_kernels import references
from accy_kernels.tuning_keys import call_key

__all__ = ["DEFAULT_N", "RANDOM_CONFIGS", "problem_from_call", "problems"]

#: default problem size (elements) of the one-dimensional families
DEFAULT_N = 1 << 20
#: the random configurations swept
RANDOM_CONFIGS = ("philox4x32-10", "philox4x32-7", "threefry2x32-20", "threefry2x32-13",
                  "squares")
_RNG_SEED = 20261129
_NP = {"f32": np.float32, "f64": np.float64, "i32": np.int32, "i64": np.int64, "u32": np.uint32}


def _rng() -> np.random.Generator:
    return np.random.default_rng(_RNG_SEED)


def _values(n: int, dtype: str, rng: np.random.Generator) -> np.ndarray:
    if dtype in ("f32", "f64"):
        return rng.standard_normal(n).astype(_NP[dtype])
    return rng.integers(-1000 if dtype != "u32" else 0, 1000, n).astype(_NP[dtype])


def _close(expected: Any, dtype: str, rtol: float = 1e-4) -> Callable[[Any], str | None]:
    """A check: equal (integers) or within ``rtol`` of the max magnitude (floats)."""
    exp = [np.asarray(e) for e in (expected if isinstance(expected, tuple) else (expected,))]

    def check(result: Any) -> str | None:
        got = result if isinstance(result, tuple) else (result,)
        if len(got) != len(exp):
            return f"{len(got)} results, expected {len(exp)}"
        for g, e in zip(got, exp, strict=True):
            g = np.asarray(g)
            if g.shape != e.shape:
                return f"shape {list(g.shape)}, expected {list(e.shape)}"
            if e.dtype.kind == "f":
                scale = max(float(np.max(np.abs(e), initial=0.0)), 1.0)
                tol = (rtol if dtype != "f32" or rtol > 1e-4 else 1e-4) * scale
                bad = ~np.isclose(g, e, rtol=0.0, atol=tol, equal_nan=True)
            else:
                bad = g != e
            if bad.any():
                i = int(np.argmax(bad.reshape(-1)))
                return (f"wrong result: element {i} is {g.reshape(-1)[i]!r}, the reference "
                        f"gives {e.reshape(-1)[i]!r} ({int(bad.sum())} differ)")
        return None

    return check


def _problem(family: str, kwargs: dict[str, Any], expected: Any, dtype: str,
             default_variant: str | None = None, label: str = "", source: str = "default",
             **extra: Any) -> FamilyProblem:
    dtypes, shape = call_key(family, kwargs) or (dtype, "default")
    return FamilyProblem(family, kwargs, dtypes, shape, _close(expected, dtype, extra.pop(
        "rtol", 1e-4)), default_variant, label=label, source=source, **extra)


def problem_from_call(record: dict[str, Any], expected: Any, label: str = "",
                      rtol: float = 1e-3) -> FamilyProblem:
    """A sweep problem for one recorded call (:func:`accy_kernels._dispatch.capture_calls`):
    its run arguments and tuning key, the variant the untuned call ran, the variants it may
    choose from (an explicit variant or format limits them), checked against ``expected``
    (the family's reference result for the call)."""
    kw = record["kwargs"]
    family = record["family"]
    dtypes, shape = call_key(family, kw) or (str(kw.get("dtype", "any")), "default")
    explicit = record["variant"].split(".")[-1] if record["variant"] else None
    variants = (explicit,) if explicit else record["allowed"]
    return FamilyProblem(family, kw, dtypes, shape,
                         _close(expected, str(kw.get("dtype", "")), rtol),
                         explicit or record["default_variant"], variants, label=label,
                         source="call")


def _dtypes(backend: Any, wanted: Iterable[str]) -> list[str]:
    have = backend.capabilities().dtypes
    return [d for d in wanted if d in have]


def _gather(family, backend, n, source, rng):
    out = []
    for d in _dtypes(backend, ("f32", "f64", "i32", "i64", "u32")):
        src = _values(n, d, rng)
        idx = rng.integers(0, n, n).astype(np.int32)
        kw = {"src": src, "indices": idx, "axis": 0, "mode": "clip", "dtype": d,
              "index_dtype": "i32"}
        out.append(_problem(family, kw, references.gather(src, idx, 0, "clip"), d,
                            label=f"{d} n={n}", source=source))
    return out


def _scatter(family, backend, n, source, rng):
    out = []
    for d in _dtypes(backend, ("f32", "i32")):
        dst = np.zeros(max(1, n >> 4), _NP[d])
        idx = rng.integers(0, dst.size, n).astype(np.int32)
        vals = _values(n, d, rng)
        kw = {"dst": dst, "indices": idx, "values": vals, "axis": 0, "mode": "raise",
              "dtype": d, "index_dtype": "i32"}
        out.append(_problem(family, kw, _last_write(dst, idx, vals), d, label=f"{d} n={n}",
                            source=source))
    return out


def _accumulate(family, backend, n, source, rng):
    from accy_kernels._dispatch import pick_accumulate

    out = []
    for d in _dtypes(backend, ("f32", "f64", "i32", "i64")):
        bins = max(1, n >> 4)
        idx = rng.integers(0, bins, n).astype(np.int32)
        vals = _values(n, d, rng)
        if family == "scatter_add":
            dst = np.zeros(bins, _NP[d])
            kw = {"dst": dst, "indices": idx, "values": vals, "axis": 0, "dtype": d,
                  "index_dtype": "i32"}
            ref = references.scatter_add(dst, idx, vals)
        else:
            kw = {"values": vals, "segment_ids": idx, "num_segments": bins, "dtype": d,
                  "index_dtype": "i32"}
            ref = references.segment_sum(vals, idx, bins)
        out.append(_problem(family, kw, ref, d, pick_accumulate(backend, d, bins, n),
                            label=f"{d} n={n}", source=source, rtol=1e-3))
    return out


def _scan(family, backend, n, source, rng):
    out = []
    for d in _dtypes(backend, ("f32", "f64", "i32", "i64")):
        x = _values(n, d, rng)
        kw = {"x": x, "inclusive": True, "dtype": d}
        out.append(_problem(family, kw, references.scan(x, True), d, label=f"{d} n={n}",
                            source=source, rtol=1e-3))
    return out


def _filter(family, backend, n, source, rng):
    out = []
    for d in _dtypes(backend, ("f32", "f64", "i32", "i64", "u32")):
        x = _values(n, d, rng)
        mask = rng.random(n) < 0.5
        kw = {"x": x, "mask": mask, "dtype": d}
        out.append(_problem(family, kw, references.filter(x, mask), d, label=f"{d} n={n}",
                            source=source))
    return out


def _sorts(family, backend, n, source, rng):
    out = []
    for d in _dtypes(backend, ("f32", "f64", "i32", "i64", "u32")):
        keys = _values(n, d, rng)
        mode = {"sort": "sort", "argsort": "argsort", "sort_pairs": "pairs"}[family]
        vals = np.arange(n, dtype=np.int32) if family == "sort_pairs" else None
        kw = {"keys": keys, "values": vals, "dtype": d, "descending": False, "mode": mode}
        ref = (references.sort_pairs(keys, vals) if family == "sort_pairs"
               else getattr(references, family)(keys))
        out.append(_problem(family, kw, ref, d, label=f"{d} n={n}", source=source))
    return out


def _random(family, backend, n, source, rng):
    return [_random_problem(n, algorithm, source) for algorithm in RANDOM_CONFIGS]


_ONE_D = {"gather": _gather, "scatter": _scatter, "scatter_add": _accumulate,
          "segment_sum": _accumulate, "scan": _scan, "filter": _filter, "sort": _sorts,
          "argsort": _sorts, "sort_pairs": _sorts, "random": _random}


def _one_d(family: str, backend: Any, n: int, source: str) -> list[FamilyProblem]:
    fn = _ONE_D.get(family)
    return fn(family, backend, n, source, _rng()) if fn is not None else []


def _last_write(dst: np.ndarray, idx: np.ndarray, vals: np.ndarray) -> np.ndarray:
    return references.scatter(dst, idx, vals)


def _random_problem(n: int, algorithm: str, source: str) -> FamilyProblem:
    from accy_kernels.random.generators import ALGORITHMS, run_distribution

    seed, offset = 0x1234_5678_9ABC_DEF0, 7

    def run(backend: Any, variant: Any, candidate: Any) -> np.ndarray:
        return run_distribution(backend, algorithm, "uniform", "f32", n, seed, offset, 0.0, 1.0,
                                candidate.workgroup_size)

    kind, width, rounds = ALGORITHMS[algorithm]
    words = _random_words(kind, width, rounds, -(-n // width), seed, offset)
    expected = ((words[:n] >> np.uint32(8)).astype(np.float32) * np.float32(2.0**-24))
    kw = {"algorithm": algorithm, "dist": "uniform", "dtype": "f32", "size": n}
    return _problem("random", kw, expected, "f32", algorithm.split("-")[0],
                    label=f"{algorithm} f32 n={n}", source=source, run=run,
                    variants=(algorithm.split("-")[0],))


def _random_words(kind: str, width: int, rounds: int, blocks: int, seed: int,
                  offset: int) -> np.ndarray:
    """The stream's u32 words, block ``offset + u`` for ``u < blocks`` (numpy references)."""
    from accy_kernels.random import philox, squares, threefry_nx32

    b = np.arange(blocks, dtype=np.uint64) + np.uint64(offset)
    if kind == "squares":
        return squares.reference(b, squares.derive_key(seed))
    lo = (b & np.uint64(0xFFFFFFFF)).astype(np.uint32)
    hi = (b >> np.uint64(32)).astype(np.uint32)
    zero = np.zeros(blocks, np.uint32)
    ctr = np.stack([lo, hi, zero, zero][:width], axis=1)
    s = [np.full(blocks, seed & 0xFFFFFFFF, np.uint32), np.full(blocks, seed >> 32, np.uint32)]
    if kind == "philox":
        return philox.reference(ctr, np.stack(s, axis=1), rounds).reshape(-1)
    key = np.stack((s + [zero, zero])[:width], axis=1)
    return threefry_nx32.reference(ctr, key, rounds).reshape(-1)


def _sparse(family: str, backend: Any, rows: int, source: str) -> list[FamilyProblem]:
    import scipy.sparse as sp

    out = []
    for d in _dtypes(backend, ("f32", "f64")):
        rng = _rng()
        a = sp.random(rows, rows, density=min(1.0, 16 / rows), format="csr", random_state=rng,
                      dtype=_NP[d])
        if family == "spmv":
            x = rng.standard_normal(rows).astype(_NP[d])
            kw = {"A": a, "x": x, "dtype": d, "options": {}}
            out.append(_problem(family, kw, references.spmv(a, x), d, "csr_scalar",
                                label=f"{d} rows={rows}", source=source, rtol=1e-3))
        else:
            x = rng.standard_normal((rows, 8)).astype(_NP[d])
            kw = {"A": a, "X": x, "dtype": d}
            out.append(_problem(family, kw, references.spmm(a, x), d, label=f"{d} rows={rows}",
                                source=source, rtol=1e-3))
    return out


def _matmul(backend: Any, size: int, source: str) -> list[FamilyProblem]:
    from accy_kernels.matmul_api import problem_of
    from accy_kernels.matmul_plan import choose

    out = []
    for d in _dtypes(backend, ("f32", "f64", "i32")):
        rng = _rng()
        a = _values(size * size, d, rng).reshape(size, size) % 7 if d == "i32" else \
            _values(size * size, d, rng).reshape(size, size)
        b = _values(size * size, d, rng).reshape(size, size) % 7 if d == "i32" else \
            _values(size * size, d, rng).reshape(size, size)
        variant = choose(backend, problem_of(a, b)[0])[0]
        out.append(_problem("matmul", {"a": a, "b": b}, references.matmul(a, b), d, variant,
                            label=f"{d} {size}^3", source=source, rtol=1e-3))
    return out


def problems(family: str, backend: Any, sizes: Iterable[int] = (),
             defaults: bool = True) -> list[FamilyProblem]:
    """The sweep problems of ``family`` on ``backend`` (see the module docstring).

    Args:
        family: an accy-kernels family name.
        backend: the live backend (its dtypes limit the problems).
        sizes: extra problem sizes (elements; SpMV/SpMM rows; matmul edge), e.g. from a
            workload (:func:`accy.tuning.family_sweep.workload_sizes`).
        defaults: include the fixed default sizes.
    """
    wanted = [(n, "workload") for n in sizes if n > 0]
    if family in ("spmv", "spmm"):
        base = [(1 << 16, "default")] if defaults else []
        return [p for n, src in base + wanted for p in _sparse(family, backend, n, src)]
    if family == "matmul":
        base = [(512, "default")] if defaults else []
        return [p for n, src in base + wanted for p in _matmul(backend, n, src)]
    base = [(DEFAULT_N, "default")] if defaults else []
    return [p for n, src in base + wanted for p in _one_d(family, backend, n, src)]
