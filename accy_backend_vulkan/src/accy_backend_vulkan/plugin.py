"""Entry point of the Vulkan backend plugin (``[project.entry-points.accy] vulkan``).

Imports nothing heavy: the ``vulkan`` package (and with it the Vulkan loader) is imported by
``probe()``/``open()``, never at plugin load.
"""

from __future__ import annotations

from typing import Any

import pluggy

hookimpl = pluggy.HookimplMarker("accy")


def _probe() -> Any:
    from accy.backend import ProbeResult

    try:
        import vulkan as vk
    except ImportError as e:
        return ProbeResult(False, f"python package 'vulkan' not installed ({e})")
    except OSError as e:  # cffi could not load libvulkan.so.1
        return ProbeResult(False, f"no Vulkan loader (libvulkan): {e}")
    except Exception as e:  # noqa: BLE001 - the reason is the answer
        return ProbeResult(False, f"vulkan import failed: {type(e).__name__}: {e}")
    from accy_backend_vulkan.driver import probe_devices

    return probe_devices(vk)


def _open() -> Any:
    from accy_backend_vulkan.driver import VulkanBackend

    return VulkanBackend()


@hookimpl
def accy_backends() -> list[Any]:
    """Return the Vulkan backend descriptor."""
    from accy.backend import BackendDescriptor

    return [
        BackendDescriptor(
            name="vulkan",
            api_version=1,
            probe=_probe,
            open=_open,
            description="SPIR-V compute on a Vulkan 1.3 device (lavapipe included)",
        )
    ]
