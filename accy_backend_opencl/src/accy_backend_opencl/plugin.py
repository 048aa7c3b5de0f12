"""Entry point of the OpenCL backend plugin (``[project.entry-points.accy] opencl``).

Imports nothing heavy: ``pyopencl`` (and with it the OpenCL ICD loader) is imported by
``probe()``/``open()``. Without a platform the backend still compiles:
``open_compile_only`` returns a backend that emits SPIR-V (``accy compile --emit spirv``).
"""

from __future__ import annotations

from typing import Any

from accy.backend import API_VERSION, BackendDescriptor, ProbeResult
from accy.plugins.fast_backend import mark_hookimpl as hookimpl

_PROBE: list[ProbeResult] = []


def probe() -> ProbeResult:
    """Say whether an OpenCL device that can load accy's programs is present (cached)."""
    if not _PROBE:
        _PROBE.append(_probe_uncached())
    return _PROBE[0]


def _probe_uncached() -> ProbeResult:
    from accy import config
    from accy.errors import AccyError

    try:
        import pyopencl as cl
    except ImportError as e:
        return ProbeResult(False, f"python package 'pyopencl' not installed ({e})")
    except Exception as e:  # noqa: BLE001 - the reason is the answer
        return ProbeResult(False, f"pyopencl import failed: {type(e).__name__}: {e}")
    from accy_backend_opencl.bridge import find_translator
    from accy_backend_opencl.device import choose_device, list_devices

    try:
        info, _ = choose_device(list_devices(cl), config.opencl_device(), find_translator())
    except AccyError as e:
        return ProbeResult(False, getattr(e, "reason", "") or str(e))
    except Exception as e:  # noqa: BLE001 - a broken ICD must not break discovery
        return ProbeResult(False, f"OpenCL query failed: {type(e).__name__}: {e}")
    return ProbeResult(True, info.label)


def _open() -> Any:
    from accy_backend_opencl.backend import OpenCLBackend

    return OpenCLBackend()


def open_compile_only() -> Any:
    """Return a device-less OpenCL backend that compiles and emits SPIR-V."""
    from accy_backend_opencl.backend import OpenCLBackend

    return OpenCLBackend(compile_only=True, unavailable_reason=probe().reason or "compile-only")



@hookimpl
def accy_backends() -> list[Any]:
    """Return the OpenCL backend descriptor."""
    return [BackendDescriptor(
        name="opencl", api_version=API_VERSION, probe=probe, open=_open,
        description="OpenCL devices: SPIR-V from LLVM (IL, or SPIR 1.2 through llvm-spirv)",
        open_compile_only=open_compile_only,
    )]
