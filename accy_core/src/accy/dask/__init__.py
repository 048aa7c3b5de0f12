"""accy on Dask arrays (extra ``accy-core[dask]``): Dask partitions, schedules and moves
data; accy compiles and runs each block's work on the worker's backend.

- :func:`jit` — an ``accy.numpy`` function on ``dask.array`` arguments: elementwise and
  broadcasting code block by block, sums / means / maxima / minima over chunked axes as
  tree reductions, row-wise ops (softmax, matmul with a replicated right operand) along
  unchunked axes; anything else is refused naming the op and the rechunking that works.
- :func:`spmv`, :func:`scatter_add`, :func:`segment_sum`, :func:`uniform`, :func:`normal`,
  :func:`sort` — kernel families over Dask collections (see :mod:`accy.dask.families`).
- :mod:`accy.dask.worker` — the per-process compile cache; ``client.run(worker.stats)``.

Works with the threaded scheduler and with ``dask.distributed`` (process workers); workers
receive tensor IR text, never pickled executables.
"""

from __future__ import annotations

from accy.dask import worker
from accy.dask.families import (
    from_scipy,
    normal,
    scatter_add,
    segment_sum,
    sort,
    spmv,
    uniform,
)
from accy.dask.jit import DaskJitted, jit

__all__ = ["DaskJitted", "from_scipy", "jit", "normal", "scatter_add", "segment_sum", "sort",
           "spmv", "uniform", "worker"]
