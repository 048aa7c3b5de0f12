"""Entry point of the CUDA backend plugin (``[project.entry-points.accy] cuda``).

Imports nothing heavy: the driver binding is imported by ``probe()``/``open()``. Without a
driver the backend still compiles: ``open_compile_only`` returns a backend that emits PTX.
"""

from __future__ import annotations

from typing import Any

from accy.backend import API_VERSION, BackendDescriptor, ProbeResult
from accy.plugins.fast_backend import mark_hookimpl as hookimpl


def _probe() -> ProbeResult:
    from accy.config import cuda_device

    from accy_backend_cuda.driver import probe_driver

    reason = probe_driver(cuda_device())
    return ProbeResult(not reason, reason + ("; PTX can still be emitted" if reason else ""))


def _open() -> Any:
    from accy.config import cuda_device

    from accy_backend_cuda.backend import CudaBackend
    from accy_backend_cuda.driver import load_driver

    return CudaBackend(load_driver(cuda_device()))


def open_compile_only(sm: int = 90) -> Any:
    """Return a driver-less CUDA backend that compiles and emits PTX for ``sm``."""
    from accy_backend_cuda.backend import CudaBackend

    return CudaBackend(None, sm=sm, unavailable_reason=_probe().reason or "compile-only")



@hookimpl
def accy_backends() -> list[Any]:
    """Return the CUDA backend descriptor."""
    return [BackendDescriptor(
        name="cuda", api_version=API_VERSION, probe=_probe, open=_open,
        description="NVIDIA GPUs: PTX from LLVM's NVPTX target, driver through pycuda",
        open_compile_only=open_compile_only,
    )]
