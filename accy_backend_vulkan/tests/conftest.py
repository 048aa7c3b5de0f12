"""Fixture: the Vulkan backend of the device tests (skips with the probe's reason)."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="module")
def vk():
    """The ``vulkan`` backend; skips where no usable Vulkan device exists."""
    from accy_backend_vulkan.plugin import _probe

    probe = _probe()
    if not probe.available:
        pytest.skip(f"vulkan unavailable: {probe.reason}")
    from accy.plugins import open_backend

    return open_backend("vulkan")
