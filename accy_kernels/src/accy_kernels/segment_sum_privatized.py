"""``segment_sum.privatized``: ``scatter_add.privatized`` into zeros along axis 0.

Per-tile private histograms without atomics, then one sum of the tiles per output element;
float sums are added in position order within a tile and then in tile order (deterministic
for a tile count, not ``numpy``'s sequential order). See :mod:`scatter_add_privatized`.
"""

from __future__ import annotations

import numpy as np
from accy.families import Candidate

from accy_kernels import scatter_add_privatized

__all__ = ["run"]


def run(backend, candidate: Candidate, values: np.ndarray, segment_ids: np.ndarray,
        num_segments: int, dtype: str, index_dtype: str) -> np.ndarray:
    """Return the ``(num_segments, *values.shape[1:])`` segment sums."""
    shape = (num_segments, *values.shape[1:])
    return scatter_add_privatized.run(backend, candidate, None, segment_ids, values, 0, dtype,
                                      index_dtype, shape=shape,
        range_checked=True)
