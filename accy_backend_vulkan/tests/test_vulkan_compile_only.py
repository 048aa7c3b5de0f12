"""`accy compile --backend vulkan --emit spirv` with no Vulkan device, loader or binding.

The device's absence is simulated in a subprocess running the real ``accy`` entry point:
``VK_ICD_FILENAMES``/``VK_DRIVER_FILES`` naming no driver (the loader finds no ICD), or a
stub ``vulkan`` package that fails to import as it does without ``libvulkan.so.1``. Needs
no GPU and no lavapipe (issue 13 point 3).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from accy.errors import BackendUnavailable
from accy.kernel import KernelBuilder
from accy_backend_vulkan.compile_only import VulkanCompileOnly

PROGRAM = """\
module {
  func @scale_add(%arg0: f32[8], %arg1: f32[8]) -> (f32[8]) {
    %0 = arith.mul %arg0, %arg1 : (f32[8], f32[8]) -> f32[8]
    %1 = arith.add %0, %arg0 : (f32[8], f32[8]) -> f32[8]
    func.return %1 : (f32[8]) -> ()
  }
}
"""
SPIRV_MAGIC = b"\x03\x02\x23\x07"


def accy_cli(*args: str, env: dict[str, str]):
    script = Path(sys.executable).with_name("accy")
    cmd = [str(script)] if script.exists() else [sys.executable, "-m", "accy"]
    return subprocess.run([*cmd, *args], capture_output=True, text=True, timeout=300,
                          check=False, env=env)


def _no_driver_env() -> dict[str, str]:
    env = dict(os.environ)
    env["VK_ICD_FILENAMES"] = env["VK_DRIVER_FILES"] = "/nonexistent/no_icd.json"
    return env


def _no_loader_env(tmp_path: Path) -> dict[str, str]:
    stub = tmp_path / "stub" / "vulkan"
    stub.mkdir(parents=True)
    (stub / "__init__.py").write_text(
        "raise OSError('cannot load library libvulkan.so.1: no such file (simulated)')\n")
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        [str(stub.parent), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    return env


@pytest.mark.parametrize("simulate", ["no_driver", "no_loader"])
def test_emit_spirv_without_a_device(tmp_path, simulate):
    env = _no_driver_env() if simulate == "no_driver" else _no_loader_env(tmp_path)
    backends = accy_cli("backends", env=env)
    assert backends.returncode == 0, backends.stderr
    line = next(x for x in backends.stdout.splitlines() if x.startswith("vulkan: "))
    assert line.startswith("vulkan: unavailable (") and "SPIR-V can still be emitted" in line

    program = tmp_path / "prog.accy"
    program.write_text(PROGRAM)
    out = tmp_path / "out"
    res = accy_cli("compile", str(program), "--backend", "vulkan", "--emit", "spirv", "-o",
                   str(out), env=env)
    assert res.returncode == 0, res.stderr
    files = sorted(out.glob("*.spv"))
    assert [f.name for f in files] == ["scale_add_k0_map.spv"] and res.stdout.split() == [
        str(f) for f in files]
    data = files[0].read_bytes()
    assert data[:4] == SPIRV_MAGIC and len(data) % 4 == 0
    if shutil.which("spirv-val"):
        val = subprocess.run(["spirv-val", "--target-env", "vulkan1.3", str(files[0])],
                             capture_output=True, text=True, timeout=60, check=False)
        assert val.returncode == 0, val.stderr

    run = accy_cli("run", str(program), "--backend", "vulkan", env=env)
    assert run.returncode == 2 and "unavailable" in run.stderr  # running still needs a device


def test_compile_only_backend_compiles_and_refuses_to_run():
    kb = KernelBuilder("double", 64)
    y, x = kb.buffer("y", "f32", "write"), kb.buffer("x", "f32", "read")
    i = kb.global_id()
    kb.store(y, i, x[i] * 2.0)
    be = VulkanCompileOnly("no device (test)")
    caps = be.capabilities()
    assert caps.artifact_formats == ("spirv", "llvm") and "no device (test)" in caps.device_name
    art = be.compile(kb.build())
    assert art.format == "spirv" and art.data[:4] == SPIRV_MAGIC
    assert be.emit(kb.build(), "spirv") == art.data
    assert b'target triple = "spirv-unknown-vulkan1.3-compute"' in be.emit(kb.build(), "llvm")
    with pytest.raises(BackendUnavailable, match="compile-only.*no device \\(test\\)"):
        be.load(art)
    with pytest.raises(BackendUnavailable, match="compile-only"):
        be.allocate(16)
