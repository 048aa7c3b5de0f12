"""Entry point of the Vulkan backend plugin (``[project.entry-points.accy] vulkan``).

Imports nothing heavy: the ``vulkan`` package (and with it the Vulkan loader) is imported by
``probe()``/``open()``, never at plugin load. Without a device the backend still compiles:
``open_compile_only`` returns one that emits SPIR-V (``accy compile --emit spirv``).
"""

from __future__ import annotations

from typing import Any

from accy.backend import BackendDescriptor
from accy.plugins.fast_backend import mark_hookimpl as hookimpl


def _probe() -> Any:
    from accy.backend import ProbeResult

    found = _probe_device()
    if found.available:
        return found
    return ProbeResult(False, f"{found.reason}; SPIR-V can still be emitted")


def _probe_device() -> Any:
    from accy.backend import ProbeResult

    try:
        import vulkan as vk
    except ImportError as e:
        return ProbeResult(False, f"python package 'vulkan' (a dependency of "
                           f"accy-backend-vulkan) cannot be imported ({e}); reinstall "
                           f"accy-backend-vulkan")
    except OSError as e:  # cffi could not load libvulkan.so.1
        return ProbeResult(False, f"no Vulkan loader (libvulkan): {e}")
    except Exception as e:  # noqa: BLE001 - the reason is the answer
        return ProbeResult(False, f"vulkan import failed: {type(e).__name__}: {e}")
    from accy_backend_vulkan.driver import probe_devices

    return probe_devices(vk)


def _open() -> Any:
    from accy_backend_vulkan.driver import VulkanBackend

    return VulkanBackend()


def open_compile_only() -> Any:
    """Return a device-less Vulkan backend that compiles kernels and emits SPIR-V."""
    from accy_backend_vulkan.compile_only import VulkanCompileOnly

    return VulkanCompileOnly(_probe_device().reason or "compile-only")



@hookimpl
def accy_backends() -> list[Any]:
    """Return the Vulkan backend descriptor."""
    return [
        BackendDescriptor(
            name="vulkan",
            api_version=1,
            probe=_probe,
            open=_open,
            description="SPIR-V compute on a Vulkan 1.3 device (lavapipe included)",
            open_compile_only=open_compile_only,
        )
    ]
