"""Profiling-suite workloads as builder programs, one module each.

Each module has ``build(elements, chain, seed=0) -> Workload`` (see
:class:`accy.profiling.workloads.common.Workload`).
"""

from __future__ import annotations

import importlib

from accy.errors import InputError, known_names
from accy.profiling.workloads.common import Workload

__all__ = ["WORKLOADS", "Workload", "build"]

WORKLOADS = (
    "elementwise_chain",
    "indexing_mix",
    "reduction_row_norm",
    "coordinate_mesh",
    "nbody_all_pairs",
    "mlp_two_layer",
    "residual_block",
    "halo_stencil",
    "attention_softmax",
    "transformer_block",
    "decoder_block",
)


def build(name: str, elements: int, chain: int, seed: int = 0) -> Workload:
    """Build workload ``name``.

    Raises:
        InputError: unknown workload (lists the known ones).
    """
    if name not in WORKLOADS:
        raise InputError(f"unknown workload {name!r}; {known_names(WORKLOADS, name)}")
    mod = importlib.import_module(f"accy.profiling.workloads.{name}")
    return mod.build(elements, chain, seed)
