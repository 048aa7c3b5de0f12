"""Entry point of the CPU backend plugin (``[project.entry-points.accy] cpu``).

Imports nothing heavy: llvmlite is imported by ``probe()``/``open()``, not at plugin load,
and not even there when an earlier process with the same CPU and llvmlite stored what it
found (:mod:`accy_backend_cpu.host_cache`).
"""

from __future__ import annotations

from typing import Any

from accy.plugins.fast_backend import mark_hookimpl as hookimpl


def _probe() -> Any:
    from accy.backend import ProbeResult

    from accy_backend_cpu.host_cache import cached_host

    if cached_host() is not None:  # llvmlite worked here with this CPU and this library
        return ProbeResult(True, "")
    try:
        from accy_backend_cpu.target import host_info

        host_info()  # imports llvmlite, initialises the native target, stores the answer
    except Exception as e:  # noqa: BLE001 - the reason is the answer
        return ProbeResult(False, f"llvmlite unusable: {type(e).__name__}: {e}")
    return ProbeResult(True, "")


def _open() -> Any:
    from accy_backend_cpu.backend import CpuBackend

    return CpuBackend()


@hookimpl
def accy_backends() -> list[Any]:
    """Return the CPU backend descriptor."""
    from accy.backend import BackendDescriptor

    return [
        BackendDescriptor(
            name="cpu",
            api_version=1,
            probe=_probe,
            open=_open,
            description="host CPU through llvmlite (LLVM JIT), work-groups on a thread pool",
        )
    ]
