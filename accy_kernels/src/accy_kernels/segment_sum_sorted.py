"""``segment_sum.sorted``: the unsorted segment sum without atomics, deterministic.

It is ``scatter_add.sorted`` into zeros along axis 0: the ids are sorted stably on the device,
then one work-item per output element sums its run in increasing position order, so each
``out[s]`` is ``((0 + v[i0]) + v[i1]) + ...`` over the rows ``i0 < i1 < ...`` with id ``s``
(bitwise equal to the sequential reference). Used where the backend lacks the atomics that
``segment_sum.atomic`` needs for the dtype.
"""

from __future__ import annotations

import numpy as np
from accy.families import Candidate

from accy_kernels import scatter_add_sorted

__all__ = ["run"]


def run(backend, candidate: Candidate, values: np.ndarray, segment_ids: np.ndarray,
        num_segments: int, dtype: str, index_dtype: str) -> np.ndarray:
    """Return the ``(num_segments, *values.shape[1:])`` segment sums."""
    shape = (num_segments, *values.shape[1:])
    return scatter_add_sorted.run(backend, candidate, None, segment_ids, values, 0, dtype,
                                  index_dtype, shape=shape,
        range_checked=True)
