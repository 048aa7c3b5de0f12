"""``accy_kernels.matmul``: the matrix-product family's Python API (numpy in, numpy out)."""

from __future__ import annotations

from typing import Any

import numpy as np
from accy.errors import InputError, UnsupportedError
from accy.families import Candidate, Plan, as_array, backend_object

from accy_kernels._common import MAX_ELEMS
from accy_kernels.matmul_plan import choose, plan_matmul
from accy_kernels.matmul_problem import MatmulProblem, operand_view

__all__ = ["matmul", "problem_of", "run", "run_blocked", "run_gemv", "run_tiled"]

DTYPES = {np.dtype(np.float32): "f32", np.dtype(np.float64): "f64", np.dtype(np.int32): "i32"}


def _as3(x: np.ndarray, name: str, vector_axis: int) -> np.ndarray:
    if x.ndim == 0:
        raise InputError(f"matmul: {name} must have at least 1 dimension, got a scalar")
    if x.ndim == 1:
        x = x[:, None] if vector_axis == 1 else x[None, :]
    if x.ndim == 2:
        x = x[None]
    if x.ndim != 3:
        raise InputError(f"matmul: {name} must have 1, 2 or 3 dimensions, got shape "
                         f"{list(x.shape)}")
    return x


def _too_big() -> UnsupportedError:
    return UnsupportedError("matmul: more than 2**31-1 elements in one operand or the "
                            "result (32-bit index arithmetic); split the product",
                            feature="size")


def problem_of(a: np.ndarray, b: np.ndarray) -> tuple[MatmulProblem, np.ndarray, np.ndarray,
                                                      tuple[int, ...]]:
    """``(problem, a base, b base, result shape)`` of ``numpy.matmul(a, b)`` for 1-3-D
    operands of one supported dtype (a 2-D operand is broadcast over the other's batch).

    Raises:
        InputError: shapes do not match. UnsupportedError: dtype or size.
    """
    dt = np.result_type(a, b)
    if dt not in DTYPES:
        raise UnsupportedError(f"matmul: dtype {dt} is not supported; use float32, float64 "
                               "or int32", feature=f"dtype {dt}")
    if max(a.size, b.size) > MAX_ELEMS:  # refused from the shapes, before any copy
        raise _too_big()
    a3, b3 = _as3(a.astype(dt, copy=False), "a", 0), _as3(b.astype(dt, copy=False), "b", 1)
    if a3.shape[2] != b3.shape[1]:
        raise InputError(f"matmul: contracted sizes differ: a {list(a.shape)} and b "
                         f"{list(b.shape)}")
    if a3.shape[0] != b3.shape[0] and 1 not in (a3.shape[0], b3.shape[0]):
        raise InputError(f"matmul: batch sizes differ: a {list(a.shape)} and b "
                         f"{list(b.shape)}")
    batch, m, k, n = max(a3.shape[0], b3.shape[0]), a3.shape[1], a3.shape[2], b3.shape[2]
    if batch * m * n > MAX_ELEMS:  # before operand_view may copy an operand
        raise _too_big()
    abase, ast, aoff = operand_view(a3)
    bbase, bst, boff = operand_view(b3)
    ast = (0 if a3.shape[0] == 1 else ast[0], ast[1], ast[2])
    bst = (0 if b3.shape[0] == 1 else bst[0], bst[1], bst[2])
    if max(abase.size, bbase.size) > MAX_ELEMS:
        raise _too_big()
    shape: tuple[int, ...] = (batch, m, n)
    if a.ndim < 3 and b.ndim < 3:
        shape = shape[1:]
    if b.ndim == 1:
        shape = shape[:-1]
    if a.ndim == 1:
        shape = shape[:-2] + shape[-1:] if b.ndim > 1 else ()
    prob = MatmulProblem(DTYPES[dt], batch, m, n, k, ast, bst, aoff, boff)
    return prob, abase, bbase, shape


def run(backend: Any, candidate: Candidate | None, a: np.ndarray, b: np.ndarray,
        variant: str | None = None) -> np.ndarray:
    """Run ``numpy.matmul(a, b)`` with ``variant`` (None: the default heuristic)."""
    prob, abase, bbase, shape = problem_of(a, b)
    be = backend_object(backend)
    plan = Plan(f"matmul.{variant or 'auto'}")
    sa, sb = plan.param(abase, prob.dtype), plan.param(bbase, prob.dtype)
    out = plan.output(prob.dtype, prob.out_elems)
    plan_matmul(plan, be, prob, sa, sb, out, variant, candidate)
    (result,) = plan.run(be)
    return result.reshape(shape)


def run_blocked(backend, candidate, a, b):
    """Variant entry point of ``matmul.blocked``."""
    return run(backend, candidate, a, b, "blocked")


def run_tiled(backend, candidate, a, b):
    """Variant entry point of ``matmul.tiled``."""
    return run(backend, candidate, a, b, "tiled")


def run_gemv(backend, candidate, a, b):
    """Variant entry point of ``matmul.gemv``."""
    return run(backend, candidate, a, b, "gemv")


def default(backend, a, b) -> Candidate:
    """The default candidate (heuristic of :mod:`accy_kernels.matmul_plan`)."""
    prob, _, _, _ = problem_of(as_array(a, "matmul a"), as_array(b, "matmul b"))
    return choose(backend_object(backend), prob)[1]


def matmul(a: Any, b: Any, *, backend: Any = "cpu", variant: str | None = None,
           candidate: Candidate | None = None) -> np.ndarray:
    """Return ``numpy.matmul(a, b)`` computed by the ``matmul`` family.

    Args:
        a: ``(m, k)``, ``(batch, m, k)`` or ``(k,)`` array of float32, float64 or int32;
            any strides (a transposed view is read in place, not copied).
        b: ``(k, n)``, ``(batch, k, n)`` or ``(k,)``; a 2-D operand is shared by every
            batch of the other.
        backend: backend name or live backend. variant: ``blocked`` (host memory: packed
            panels, vector microkernel), ``tiled`` (shared-memory tiles), ``gemv``
            (matrix-vector); None picks by shape and device (:mod:`accy_kernels.matmul_plan`).
        candidate: tile options (see each variant's ``candidates()``).

    Returns:
        ``numpy.matmul``'s shape and dtype. Float sums are in a different order than
        numpy's (error within ``k * eps * sum |a||b|``); int32 wraps like numpy.

    Raises:
        InputError: mismatched shapes, rank above 3, unknown variant.
        UnsupportedError: other dtypes, more than 2**31-1 elements, ``gemv`` for a
            matrix-matrix product, a tile that does not fit the device.
    """
    a = as_array(a, "matmul a")
    b = as_array(b, "matmul b")
    if variant is None or candidate is None:
        return _run_tuned(backend, candidate, a, b, variant)
    return run(backend, candidate, a, b, variant)


def _run_tuned(backend: Any, candidate: Candidate | None, a: np.ndarray, b: np.ndarray,
               variant: str | None) -> np.ndarray:
    """``run`` with the tuning cache's variant and candidate for the call's key where the
    caller left them unset (the heuristic otherwise, and when the cached one refuses)."""
    from accy_kernels._dispatch import _BY_NAME, note_choice, tuned

    problem_of(a, b)  # shape and dtype errors first
    be = backend_object(backend)
    var, lookup = tuned("matmul", be, {"a": a, "b": b})
    fam = _BY_NAME["matmul"]
    name = variant or (var.name if var is not None else None)
    cand = candidate
    if cand is None and name is not None:
        cand = lookup(fam.variant(name))
    if (name, cand) != (variant, candidate):
        try:
            note_choice("matmul", name or "auto", cand, "explicit" if variant else "cache",
                        "explicit" if candidate else ("cache" if cand else "default"))
            return run(be, cand, a, b, name)
        except UnsupportedError:
            pass
    note_choice("matmul", variant or "auto", candidate, "explicit" if variant else "default",
                "explicit" if candidate else "default")
    return run(be, candidate, a, b, variant)
