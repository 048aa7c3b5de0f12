"""``spirv-val`` runs leave nothing in the temporary directory, accepted or rejected."""

from __future__ import annotations

import shutil
import struct
import tempfile

import pytest
from accy.errors import CompileError
from accy_backend_vulkan.toolchain import validate

pytestmark = pytest.mark.skipif(shutil.which("spirv-val") is None, reason="no spirv-val")

_HEADER = (0x07230203, 0x00010300, 0, 1, 0)
_CAPABILITY_SHADER = ((2 << 16) | 17, 1)


def _module(*words: int) -> bytes:
    return struct.pack(f"<{len(words)}I", *words)


def test_rejected_module_leaves_no_file(tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    bad = _module(*_HEADER, *_CAPABILITY_SHADER)  # no OpMemoryModel: invalid
    for _ in range(3):
        with pytest.raises(CompileError, match="spirv-val rejected kernel 'bad k'") as info:
            validate(bad, "bad k")
        assert info.value.tool == "spirv-val" and info.value.stderr
    assert list(tmp_path.iterdir()) == []


def test_accepted_module_leaves_no_file(tmp_path, monkeypatch):
    import vulkan_kernels as K
    from accy_backend_vulkan.target import VulkanTarget
    from accy_backend_vulkan.toolchain import compile_spirv

    spirv = compile_spirv(K.scale(), VulkanTarget())
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    assert validate(spirv, "scale")
    assert list(tmp_path.iterdir()) == []
