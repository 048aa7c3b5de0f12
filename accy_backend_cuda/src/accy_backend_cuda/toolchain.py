"""Find the CUDA toolchain pieces accy uses without a driver: libdevice and ``ptxas``.

Neither is required. libdevice (``libdevice.10.bc``) gives accurate transcendentals; without
it the target falls back to f32 approximations. ``ptxas`` checks generated PTX ahead of time
(tests, ``accy compile``); a rejection raises :class:`~accy.errors.CompileError` with the
assembler's message and a command line that reproduces it.

Search order (numba's conventions, then NVIDIA's wheels): ``CUDA_HOME``, ``CUDA_PATH``,
``CONDA_PREFIX``, the ``nvidia-cuda-nvcc`` wheels (``site-packages/nvidia/*/``), then
``/usr/local/cuda`` and Debian's ``/usr/lib/nvidia-cuda-toolkit``. ``ptxas`` is looked up on
``PATH`` first.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from functools import cache
from pathlib import Path

from accy.errors import CompileError

__all__ = ["check_ptx", "find_libdevice", "find_ptxas", "toolkit_roots"]

_LIBDEVICE_GLOBS = ("nvvm/libdevice/libdevice*.bc", "lib/libdevice*.bc", "libdevice/libdevice*.bc")


def toolkit_roots() -> list[Path]:
    """Return the directories that may hold a CUDA toolkit, most specific first."""
    roots = [os.environ.get(v) for v in ("CUDA_HOME", "CUDA_PATH", "CONDA_PREFIX")]
    out = [Path(r) for r in roots if r]
    for entry in sys.path:
        nvidia = Path(entry) / "nvidia"
        if nvidia.is_dir():
            out += sorted(p for p in nvidia.iterdir() if p.is_dir())
    out += [Path("/usr/local/cuda"), Path("/usr/lib/nvidia-cuda-toolkit")]
    return out


@cache
def find_libdevice() -> str | None:
    """Return the path of ``libdevice.10.bc`` (or another ``libdevice*.bc``), or ``None``."""
    for root in toolkit_roots():
        for pattern in _LIBDEVICE_GLOBS:
            hits = sorted(root.glob(pattern))
            if hits:
                return str(hits[-1])
    return None


@cache
def find_ptxas() -> str | None:
    """Return the path of ``ptxas`` (``PATH`` first, then the toolkit roots), or ``None``."""
    found = shutil.which("ptxas")
    if found:
        return found
    for root in toolkit_roots():
        candidate = root / "bin" / "ptxas"
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    return None


def check_ptx(ptx: str, sm: int, name: str = "kernel", timeout_s: float = 60.0) -> None:
    """Assemble ``ptx`` with ``ptxas --gpu-name sm_<sm>`` and discard the output.

    Raises:
        CompileError: ``ptxas`` is missing (``tool`` = ``"ptxas"``, empty stderr), or it
            rejected the PTX (stderr, and ``repro``: the command on a kept copy of the PTX).
    """
    ptxas = find_ptxas()
    if ptxas is None:
        raise CompileError(
            "ptxas not found; put the CUDA toolkit's bin/ on PATH or set CUDA_HOME",
            tool="ptxas",
        )
    with tempfile.NamedTemporaryFile("w", suffix=".ptx", delete=False,
                                     prefix=f"accy-{name}-sm_{sm}-") as f:
        f.write(ptx)
        path = f.name
    command = [ptxas, "--gpu-name", f"sm_{sm}", "-o", os.devnull, path]
    result = subprocess.run(command, capture_output=True, text=True, timeout=timeout_s)
    if result.returncode == 0:
        os.unlink(path)
        return
    stderr = (result.stderr or result.stdout).strip()
    repro = " ".join(command)
    first = stderr.splitlines()[0] if stderr else f"exit code {result.returncode}"
    raise CompileError(
        f"ptxas rejected kernel {name!r} for sm_{sm}: {first}; reproduce with: {repro}",
        tool="ptxas", stderr=stderr, repro=repro,
    )
