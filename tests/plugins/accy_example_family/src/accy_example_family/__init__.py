"""A third-party kernel family in one file: ``axpy`` (``y = a * x + y``) for accy.

Installing this package (entry point ``[project.entry-points.accy] example_family =
"accy_example_family"``) is all it takes: accy discovers the family through the
``accy_kernel_families()`` hook, ``accy kernels`` lists it, and ``axpy(a, x, y)`` runs it on
any backend. The kernel is written once with :class:`accy.kernel.KernelBuilder`.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np
from accy.errors import InputError
from accy.families import Candidate, Family, Plan, Role, Signature, Variant, check_dtype
from accy.plugins import hookimpl

__all__ = ["FAMILY", "accy_kernel_families", "axpy", "reference"]


def reference(a: float, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """numpy ``a * x + y``."""
    return (a * x + y).astype(x.dtype)


@functools.cache
def _kernel(dtype: str, workgroup_size: int):
    from accy.kernel import KernelBuilder

    kb = KernelBuilder(f"example_axpy_{dtype}_wg{workgroup_size}", workgroup_size)
    out = kb.buffer("out", dtype, "write")
    x, y = kb.buffer("x", dtype, "read"), kb.buffer("y", dtype, "read")
    n, a = kb.scalar("n", "i32"), kb.scalar("a", dtype)
    i = kb.global_id()
    with kb.if_(i < n):
        kb.store(out, i, a * x[i] + y[i])
    return kb.build()


def run(backend: Any, candidate: Candidate, a: float, x: np.ndarray, y: np.ndarray,
        dtype: str) -> np.ndarray:
    """Run the axpy kernel: one work-item per element."""
    wg = candidate.workgroup_size
    plan = Plan("axpy.simple")
    out = plan.output(dtype, x.size)
    xs, ys = plan.param(x, dtype), plan.param(y, dtype)
    plan.launch(_kernel(dtype, wg), -(-x.size // wg), [out, xs, ys],
                [("i32", x.size), (dtype, a)])
    (result,) = plan.run(backend)
    return result


FAMILY = Family(
    "axpy",
    Signature((Role("a", "option", (), "", "scale factor"),
               Role("x", "input", ("f32", "f64"), "(n,)"),
               Role("y", "input", ("f32", "f64"), "(n,)"),
               Role("out", "output", ("f32", "f64"), "(n,)"))),
    reference=f"{__name__}:reference",
    variants=(Variant("simple", f"{__name__}:run", "one work-item per element",
                      (Candidate(256), Candidate(64))),),
    doc="a * x + y",
    provider="accy-example-family",
)


@hookimpl
def accy_kernel_families() -> list:
    """Return the example family."""
    return [FAMILY]


def axpy(a: float, x: Any, y: Any, *, backend: Any = "cpu") -> np.ndarray:
    """Return ``a * x + y`` for 1-D float32 | float64 arrays of one shape.

    Raises:
        InputError: shapes differ. UnsupportedError: other dtypes.
    """
    x, y = np.asarray(x), np.asarray(y)
    if x.shape != y.shape or x.ndim != 1 or x.dtype != y.dtype:
        raise InputError(f"axpy: x and y must be 1-D of one shape and dtype, got "
                         f"{x.dtype}{list(x.shape)} and {y.dtype}{list(y.shape)}")
    dtype = check_dtype(x, "x", ("f32", "f64"), "axpy")
    from accy.families import get_variant

    _, variant = get_variant("axpy")
    from accy.families import resolve

    return resolve(variant.run)(backend, variant.candidates[0], a=a, x=x, y=y, dtype=dtype)
