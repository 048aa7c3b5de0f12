"""accy-kernels: kernel-library families written once in accy's kernel DSL.

numpy arrays in, numpy arrays out; every function takes ``backend=`` (a backend name, default
``"cpu"``, or a live backend), ``variant=`` (a variant name of the family, default: the
first) and ``candidate=`` (an :class:`accy.families.Candidate`, default: the variant's
choice). All inputs are checked on the host before any kernel is launched.

Example::

    import numpy as np, accy_kernels as ak

    ak.sort(np.array([3.0, np.nan, -0.0, 0.0, 1.0], np.float32))
    ak.gather(np.arange(10.0), np.array([3, -1]))            # [3., 9.]
    ak.random.uniform((4,), seed=7)                           # Philox4x32-10

Families are also listed by ``accy kernels`` and discovered by accy through the
``accy_kernel_families()`` hook (:mod:`accy_kernels.plugin`).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from accy_kernels import random
    from accy_kernels.api import (
        argsort,
        filter,
        gather,
        scan,
        scatter,
        scatter_add,
        segment_sum,
        sort,
        sort_pairs,
    )
    from accy_kernels.matmul_api import matmul
    from accy_kernels.sparse_api import read_matrix, spmm, spmv
    from accy_kernels.spmv_prepared import PreparedSpmv, prepare_spmv

__version__ = "0.1.0"

__all__ = [
    "PreparedSpmv",
    "argsort",
    "filter",
    "gather",
    "matmul",
    "prepare_spmv",
    "random",
    "read_matrix",
    "scan",
    "scatter",
    "scatter_add",
    "segment_sum",
    "sort",
    "sort_pairs",
    "spmm",
    "spmv",
]

# the public functions load on first use: accy imports this package (its plugin entry point
# is ``accy_kernels.plugin``) at every start, and a program that calls no family should not
# pay for importing them all (~20-60 ms)
_HOMES = {
    **dict.fromkeys(("argsort", "filter", "gather", "scan", "scatter", "scatter_add",
                     "segment_sum", "sort", "sort_pairs"), "accy_kernels.api"),
    "matmul": "accy_kernels.matmul_api",
    **dict.fromkeys(("read_matrix", "spmm", "spmv"), "accy_kernels.sparse_api"),
    **dict.fromkeys(("PreparedSpmv", "prepare_spmv"), "accy_kernels.spmv_prepared"),
}


def __getattr__(name: str) -> Any:
    if name == "random":
        return importlib.import_module("accy_kernels.random")
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'accy_kernels' has no attribute {name!r}")
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
