"""Run a compiled executable on device arrays: no host copies between calls.

:func:`run_on_device` binds the input device arrays' buffers to the parameter slots of the
executable's :class:`~accy.runtime.LaunchGraph`, allocates one fresh buffer per written
result (owned by the returned :class:`DeviceArray`, freed when it is collected), launches
the executable's loaded kernels with its persistent constant/temporary buffers, and
synchronizes. Nothing is read from or written to the host, except results that are plain
IR constants (uploaded once per call).

This reuses ``Executable.graph``, ``Executable.backend`` and the executable's loaded kernels
and persistent buffers (the sequence protocol of :mod:`accy.runtime.sequence`, its default
workspace); calls are serialized by its lock.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from accy.errors import InputError
from accy.frontend.device_array import DeviceArray, asarray

__all__ = ["run_on_device"]


def _check(exe: Any, inputs: Sequence[DeviceArray]) -> None:
    name = exe.graph.name
    if len(inputs) != len(exe.param_types):
        raise InputError(f"{name}: expected {len(exe.param_types)} inputs, got {len(inputs)}")
    for i, (a, t) in enumerate(zip(inputs, exe.param_types, strict=True)):
        if a.type != t:
            raise InputError(f"{name} input #{i}: expected {t}, got {a.type}; the jit "
                             "signature and the device array disagree")
        if a.backend is not exe.backend:
            raise InputError(
                f"{name} input #{i}: {a!r} belongs to another backend instance than the "
                f"executable ({exe.backend.name}); move it with accy.asarray(x, backend=...)")
        a._check_alive()


def run_on_device(exe: Any, inputs: Sequence[DeviceArray], backend_name: str
                  ) -> tuple[DeviceArray, ...]:
    """Run ``exe`` on ``inputs`` (device arrays of its parameter types); return device arrays.

    Raises:
        InputError: wrong count, type, backend or a deleted input.
        IndexOutOfRangeError: a checked gather/scatter index is out of range.
        BackendError: the backend failed a launch.
    """
    from accy.runtime.resources import MIN_BUFFER_BYTES
    from accy.runtime.sequence import run_sequence

    _check(exe, inputs)
    be, g = exe.backend, exe.graph
    written = _written_slots(exe)
    with exe._lock:
        buffers: dict[int, Any] = {s: a.buffer for s, a in zip(g.param_slots, inputs, strict=True)}
        made: dict[int, DeviceArray] = {}
        for slot, t in zip(g.result_slots, g.result_types, strict=True):
            if slot in written and slot not in made and slot not in buffers:
                buf = be.allocate(max(t.nbytes, MIN_BUFFER_BYTES))
                made[slot] = DeviceArray(be, buf, t, backend_name, host_memory=exe._host)
                buffers[slot] = buf
        # checked gathers/scatters: their index slots are read back from the device before
        # the launch that uses them (the host path checks its numpy inputs); without this a
        # device array indexed out of range read past its buffer
        checks = (lambda i: exe._check_indices(i, {}, buffers, exe)) if g.checks else None
        run_sequence(exe, g, buffers, checks)
        be.synchronize()
    params = dict(zip(g.param_slots, inputs, strict=True))
    out = []
    for slot, t in zip(g.result_slots, g.result_types, strict=True):
        if slot in made:
            out.append(made[slot])
        elif slot in params:
            out.append(params[slot])  # arrays are immutable: aliasing the input is safe
        else:
            out.append(asarray(g.constants[slot].reshape(t.shape), backend=backend_name,
                               copy=True))
    return tuple(out)


def _written_slots(exe: Any) -> set[int]:
    cached = getattr(exe, "_accy_frontend_written", None)
    if cached is None:
        cached = exe.graph.written_slots
        exe._accy_frontend_written = cached
    return cached
