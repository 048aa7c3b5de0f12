"""accy's CUDA backend: kernel IR → PTX (LLVM's NVPTX target) → the CUDA driver.

Importing this package is cheap. ``plugin`` declares the backend without importing a driver
binding; ``CudaTarget`` (pure) and ``CudaBackend`` load on first attribute access, and the
binding (pycuda, else cuda-bindings) only when a device is opened.
"""

from __future__ import annotations

__version__ = "0.1.0"
__all__ = ["CudaBackend", "CudaTarget", "emit_ptx"]


def emit_ptx(kernel: object, sm: int | str = 90) -> str:
    """Return the PTX text of ``kernel`` for ``sm`` (no GPU or driver needed)."""
    from accy_backend_cuda.plugin import open_compile_only
    from accy_backend_cuda.target import parse_sm

    return open_compile_only(parse_sm(sm)).emit(kernel, "ptx").decode()


def __getattr__(name: str) -> object:
    if name == "CudaBackend":
        from accy_backend_cuda.backend import CudaBackend

        return CudaBackend
    if name == "CudaTarget":
        from accy_backend_cuda.target import CudaTarget

        return CudaTarget
    raise AttributeError(f"module 'accy_backend_cuda' has no attribute {name!r}")
