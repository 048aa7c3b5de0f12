"""decoder_block: the transformer block with a causal mask.

Same shapes and computation as :mod:`accy.profiling.workloads.transformer_block` with
``causal=True``: attention scores above the diagonal (key after query) are replaced by −1e9
before the softmax, built from two ``iota`` tensors compared with ``ge``.
"""

from __future__ import annotations

from accy.profiling.workloads.common import Workload
from accy.profiling.workloads.transformer_block import build as build_block


def build(elements: int, chain: int, seed: int = 0) -> Workload:
    """Build the workload (sequence length ``elements``, model width ``chain``)."""
    return build_block(elements, chain, seed, causal=True, name="decoder_block")
