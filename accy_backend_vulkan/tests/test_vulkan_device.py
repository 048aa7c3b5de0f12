"""Device selection (``ACCY_VULKAN_DEVICE``) and the persisted pipeline cache."""

from __future__ import annotations

import struct

import pytest
from accy.errors import BackendUnavailable, CacheWarning

pytest.importorskip("vulkan", exc_type=ImportError)


def _modules():
    try:
        from accy_backend_vulkan import device, pipeline_cache
    except OSError as e:  # no loader: the pure parts still need the module's constants
        pytest.skip(f"vulkan loader missing: {e}")
    return device, pipeline_cache


def test_select_device_by_rank_index_and_name():
    device, _ = _modules()
    import vulkan as vk

    described = [
        ("llvmpipe (LLVM 15)", vk.VK_PHYSICAL_DEVICE_TYPE_CPU),
        ("Intel UHD", vk.VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU),
        ("NVIDIA RTX 4090", vk.VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU),
    ]
    assert device.select_device(described, None) == 2
    assert device.select_device(described[:2], None) == 1
    assert device.select_device(described, 0) == 0
    assert device.select_device(described, "rtx") == 2
    with pytest.raises(BackendUnavailable, match="matches no device name.*0: llvmpipe"):
        device.select_device(described, "radeon")
    with pytest.raises(BackendUnavailable, match="out of range.*2: NVIDIA RTX 4090"):
        device.select_device(described, 7)


def test_config_accepts_index_or_name(monkeypatch):
    from accy import config

    monkeypatch.setenv("ACCY_VULKAN_DEVICE", "llvmpipe")
    assert config.vulkan_device() == "llvmpipe"
    monkeypatch.setenv("ACCY_VULKAN_DEVICE", "1")
    assert config.vulkan_device() == 1


def _identity(pipeline_cache, uuid=b"u" * 16):
    return pipeline_cache.DeviceIdentity(0x10005, 0x0000, 1, uuid)


def _blob(ident, payload=b"data"):
    head = struct.pack("<IIII16s", 32, 1, ident.vendor_id, ident.device_id, ident.uuid)
    return head + payload


def test_pipeline_cache_header_is_validated(monkeypatch, tmp_path):
    _, pc = _modules()
    monkeypatch.setenv("ACCY_CACHE_DIR", str(tmp_path))
    ident = _identity(pc)
    good = _blob(ident)
    assert pc.valid_header(good, ident)
    assert not pc.valid_header(good[:20], ident)  # truncated
    assert not pc.valid_header(_blob(_identity(pc, b"v" * 16)), ident)  # foreign UUID
    assert not pc.valid_header(b"\xff" * 64, ident)  # garbage
    path = pc.save_blob(ident, good)
    assert path is not None and path.parent.name == "vulkan-pipelines"
    assert pc.load_blob(ident) == good
    assert not list(path.parent.glob("*.tmp"))  # atomic: no temporary left
    path.write_bytes(b"corrupt")
    with pytest.warns(CacheWarning, match="no valid pipeline cache header"):
        assert pc.load_blob(ident) is None
    assert pc.save_blob(ident, b"corrupt") is None  # never store an invalid blob


def test_backend_persists_and_reloads_its_pipeline_cache(monkeypatch, tmp_path):
    from accy_backend_vulkan.plugin import _probe

    if not _probe().available:
        pytest.skip("vulkan unavailable")
    import vulkan_kernels as K
    from accy_backend_vulkan.driver import VulkanBackend

    monkeypatch.setenv("ACCY_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("ACCY_VULKAN_DEVICE", "llvmpipe")
    be = VulkanBackend()
    assert not be.pipeline_cache_loaded
    be.destroy(be.load(be.compile(K.scale())))
    be.close()
    files = list((tmp_path / "vulkan-pipelines").glob("*.bin"))
    assert len(files) == 1
    be = VulkanBackend()
    assert be.pipeline_cache_loaded
    be.close()
    files[0].write_bytes(files[0].read_bytes()[:16] + b"\0" * 16)  # wrong UUID / corrupt
    with pytest.warns(CacheWarning, match=str(files[0].name)):
        be = VulkanBackend()
    assert not be.pipeline_cache_loaded
    be.destroy(be.load(be.compile(K.scale())))  # still works, rebuilt
    be.close()


def test_unknown_device_name_lists_devices(monkeypatch):
    from accy_backend_vulkan.plugin import _probe

    if not _probe().available:
        pytest.skip("vulkan unavailable")
    from accy_backend_vulkan.driver import VulkanBackend

    monkeypatch.setenv("ACCY_VULKAN_DEVICE", "no-such-gpu")
    with pytest.raises(BackendUnavailable, match="no-such-gpu.*devices: 0: "):
        VulkanBackend()
