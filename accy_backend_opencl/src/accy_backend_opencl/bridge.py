"""SPIR-V → SPIR 1.2 bitcode with the Khronos translator, for drivers that take no IL.

Debian's PoCL 3.1 and Mesa 22.3's Rusticl report no IL version (``clCreateProgramWithIL``
fails), but PoCL builds SPIR 1.2 bitcode (``cl_khr_spir``) with ``-x spir -spir-std=1.2``.
The Khronos SPIRV-LLVM-Translator (``llvm-spirv-15 -r``, Debian package ``llvm-spirv-15``)
turns the SPIR-V of LLVM's SPIR-V target into that bitcode. It asserts on scalar
``OpConstantNull`` (legal SPIR-V that LLVM emits for zeros), so :func:`spir_bitcode`
rewrites those to ``OpConstant 0`` first (:func:`accy.codegen.spirv.null_to_const`).
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path

from accy.codegen.spirv import null_to_const
from accy.errors import CodegenError, CompileError

__all__ = ["SPIR_BUILD_OPTIONS", "TRANSLATOR_NAMES", "find_translator", "spir_bitcode"]

#: the translator's names, newest first (Debian installs ``llvm-spirv-<llvm major>``)
TRANSLATOR_NAMES = ("llvm-spirv-15", "llvm-spirv-16", "llvm-spirv-14", "llvm-spirv")
#: what ``clBuildProgram`` needs to read SPIR 1.2 bitcode
SPIR_BUILD_OPTIONS = "-x spir -spir-std=1.2"
_TIMEOUT_S = 120


def find_translator() -> str | None:
    """Return the path of a SPIR-V → LLVM translator, or ``None`` when none is installed."""
    for name in TRANSLATOR_NAMES:
        found = shutil.which(name) or _debian_path(name)
        if found:
            return found
    return None


def _debian_path(name: str) -> str | None:
    version = name.rsplit("-", 1)[-1]
    if not version.isdigit():
        return None
    path = Path(f"/usr/lib/llvm-{version}/bin/llvm-spirv")
    return str(path) if path.exists() else None


def spir_bitcode(spirv: bytes, kernel_name: str, tool: str | None = None) -> bytes:
    """Return SPIR 1.2 bitcode of the OpenCL SPIR-V module ``spirv``.

    Raises:
        CompileError: no translator is installed, or it failed (its stderr; ``repro`` is
            the kept input module and the command).
    """
    tool = tool or find_translator()
    if tool is None:
        raise CompileError(
            "opencl: this device takes no SPIR-V; the SPIR bridge needs the Khronos "
            "translator llvm-spirv-15 (Debian: apt install llvm-spirv-15)",
            tool="llvm-spirv",
        )
    with tempfile.TemporaryDirectory(prefix="accy-spir-") as tmp:
        source, target = Path(tmp) / "kernel.spv", Path(tmp) / "kernel.bc"
        try:
            source.write_bytes(null_to_const(spirv))
        except CodegenError as e:
            raise CompileError(f"opencl: kernel {kernel_name!r} is not valid SPIR-V ({e})",
                               tool="spirv") from e
        command = [tool, "-r", str(source), "-o", str(target)]
        try:
            result = subprocess.run(command, capture_output=True, text=True, timeout=_TIMEOUT_S)
        except (OSError, subprocess.TimeoutExpired) as e:
            raise CompileError(f"opencl: {tool} failed on kernel {kernel_name!r}: {e}",
                               tool=tool) from e
        if result.returncode == 0 and target.exists():
            return target.read_bytes()
        kept = Path(tempfile.mkdtemp(prefix="accy-spir-failed-")) / f"{kernel_name}.spv"
        kept.write_bytes(source.read_bytes())
    message = (result.stderr or result.stdout).strip() or f"exit code {result.returncode}"
    raise CompileError(
        f"opencl: {Path(tool).name} could not translate kernel {kernel_name!r} to SPIR: "
        f"{message.splitlines()[-1]}; module kept at {kept}",
        tool=tool, stderr=message, repro=f"{tool} -r {kept} -o {kept.with_suffix('.bc')}",
    )
