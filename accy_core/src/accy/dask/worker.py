"""What runs inside a Dask worker: compile tensor IR text once per process, run blocks.

Tasks carry IR *text* (never pickled executables). Each worker process keeps the
executables it built in a process-wide table keyed by ``(sha256(text), backend)``; the
first block of a signature on a worker compiles (through that worker's disk artifact cache,
so a restarted worker mostly loads), later blocks and later graphs reuse it. :func:`stats`
reports the counts; ``client.run(accy.dask.worker.stats)`` asks every worker.
"""

from __future__ import annotations

import threading
from typing import Any

import numpy as np

from accy.hashing import sha256

__all__ = ["reset_stats", "run_block", "run_text", "stats"]

_LOCK = threading.Lock()
_EXECUTABLES: dict[tuple[str, str], Any] = {}
_STATS = {"compiles": 0, "runs": 0}


def stats() -> dict[str, int]:
    """This process's counters: ``compiles`` (IR texts compiled), ``runs`` (blocks run),
    ``cached`` (executables held)."""
    with _LOCK:
        return {**_STATS, "cached": len(_EXECUTABLES)}


def reset_stats() -> None:
    """Zero the counters and drop the cached executables (tests)."""
    with _LOCK:
        _STATS.update(compiles=0, runs=0)
        _EXECUTABLES.clear()


def _executable(text: str, backend: str) -> Any:
    key = (sha256(text.encode()).hexdigest(), backend)
    with _LOCK:
        exe = _EXECUTABLES.get(key)
        if exe is not None:
            return exe
        import accy
        from accy.ir import parse_module

        exe = accy.compile(parse_module(text), backend=backend)
        _EXECUTABLES[key] = exe
        _STATS["compiles"] += 1
        return exe


def run_text(text: str, backend: str, *arrays: np.ndarray) -> tuple[np.ndarray, ...]:
    """Compile (once per process) and run the single function of ``text`` on ``arrays``."""
    exe = _executable(text, backend)
    with _LOCK:
        _STATS["runs"] += 1
    return tuple(exe(*[_contiguous(a) for a in arrays]))


def _contiguous(a: object) -> np.ndarray:
    # np.ascontiguousarray makes 0-d arrays 1-d; Dask hands 0-d blocks over as numpy scalars
    arr = np.asarray(a)
    return arr if arr.flags.c_contiguous else np.ascontiguousarray(arr)


def run_block(texts: dict[tuple, str], backend: str, *blocks: np.ndarray) -> np.ndarray:
    """Run the block program whose leaf shapes match ``blocks`` (see ``blocks.block_texts``).

    Raises:
        InternalError: no program was prepared for these block shapes (a partitioner bug).
    """
    key = tuple(tuple(b.shape) for b in blocks)
    text = texts.get(key)
    if text is None:
        from accy.errors import InternalError

        raise InternalError(f"accy.dask: no block program for block shapes {list(key)}; "
                            f"prepared: {sorted(texts)}")
    return run_text(text, backend, *blocks)[0]
