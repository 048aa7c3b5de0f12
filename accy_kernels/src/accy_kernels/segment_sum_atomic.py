"""``segment_sum.atomic``: ``out[s] = sum(values[i] for i where segment_ids[i] == s)``.

Unsorted segment sum (as TensorFlow's ``unsorted_segment_sum``): ``values`` has shape
``(n, *inner)``, ``segment_ids`` shape ``(n,)`` with ids in ``[0, num_segments)`` (checked on
the host before launch), the result ``(num_segments, *inner)``; empty segments are 0. It is
``scatter_add.atomic`` into zeros along axis 0: float sums accumulate in scheduling order.
"""

from __future__ import annotations

import numpy as np
from accy.families import Candidate

from accy_kernels import scatter_add_atomic

__all__ = ["run"]


def run(backend, candidate: Candidate, values: np.ndarray, segment_ids: np.ndarray,
        num_segments: int, dtype: str, index_dtype: str) -> np.ndarray:
    """Return the ``(num_segments, *values.shape[1:])`` segment sums."""
    shape = (num_segments, *values.shape[1:])
    return scatter_add_atomic.run(backend, candidate, None, segment_ids, values, 0, dtype,
                                  index_dtype, shape=shape,
        range_checked=True)
