"""Replay the launches of captured family plans on buffers prepared once (family sweeps).

:func:`accy.families.runner.capture_plans` records the launch graphs a family call ran;
:class:`PreparedReplay` allocates one device buffer per slot of each graph, uploads the host
inputs once, and then :meth:`~PreparedReplay.launch` enqueues only the kernel launches
(no conversion, upload, readback or compilation), so a sweep times kernels rather than host
calls. :meth:`~PreparedReplay.reset` zeroes the result slots (outputs start zeroed, and
some kernels accumulate into them); sweeps call it outside the timed region.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from accy.hashing import sha256

__all__ = ["PreparedReplay", "artifact_fingerprint"]

_MIN_BYTES = 16


def artifact_fingerprint(backend: Any, runs: Sequence[Any]) -> str:
    """sha256 (hex) of the artifact keys (backend, device, kernel fingerprint, accy version)
    of every kernel the captured ``runs`` launched, in launch order."""
    from accy.runtime.compiler import artifact_key

    caps = backend.capabilities()
    h = sha256()
    for run in runs:
        for ln in run.graph.launches:
            kernel = run.graph.kernels[ln.kernel]
            h.update(artifact_key(backend.name, caps.device_fingerprint,
                                  kernel.fingerprint()).encode())
    return h.hexdigest()


class PreparedReplay:
    """The captured ``runs`` bound to buffers on their backend (see the module docstring).

    Use as a context manager, or call :meth:`close`, to free the buffers.
    """

    def __init__(self, runs: Sequence[Any]) -> None:
        self.runs = list(runs)
        self._bufs: list[list[object]] = []
        try:
            for run in self.runs:
                self._bufs.append(self._prepare(run))
        except BaseException:
            self.close()
            raise

    @staticmethod
    def _prepare(run: Any) -> list[object]:
        be, g = run.backend, run.graph
        bufs: list[object] = []
        try:
            for nbytes in g.slot_bytes:
                bufs.append(be.allocate(max(int(nbytes), _MIN_BYTES)))
            for slot, arr in zip(g.param_slots, run.params, strict=True):
                data = np.ascontiguousarray(arr).reshape(-1).view(np.uint8)
                if data.nbytes:
                    be.write(bufs[slot], data)
        except BaseException:
            for b in bufs:
                be.free(b)
            raise
        return bufs

    def reset(self) -> None:
        """Zero every result slot (not timed by sweeps)."""
        for run, bufs in zip(self.runs, self._bufs, strict=True):
            for slot in run.graph.result_slots:
                run.backend.fill(bufs[slot], 0)

    def launch(self) -> None:
        """Enqueue every launch of every run, in order (no synchronize)."""
        from accy.backend import Geometry

        for run, bufs in zip(self.runs, self._bufs, strict=True):
            be = run.backend
            for ln in run.graph.launches:
                be.launch(run.loaded[ln.kernel], Geometry(ln.groups, ln.workgroup_size),
                          [bufs[s] for s in ln.slots], list(ln.scalars))

    def synchronize(self) -> None:
        """Wait for every backend the runs launched on (CPU: the pool barrier; GPU
        backends: their queue)."""
        seen: list[Any] = []
        for run in self.runs:
            if not any(run.backend is b for b in seen):
                seen.append(run.backend)
                run.backend.synchronize()

    def close(self) -> None:
        """Free the buffers (idempotent)."""
        for run, bufs in zip(self.runs, self._bufs, strict=False):
            for b in bufs:
                run.backend.free(b)
        self._bufs = []

    def __enter__(self) -> PreparedReplay:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
