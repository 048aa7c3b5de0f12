"""``accy compile --backend cuda --emit ptx`` works without a GPU or driver."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from accy_backend_cuda.toolchain import check_ptx, find_ptxas


@pytest.mark.parametrize("sm", [80, 90])
def test_accy_compile_emits_one_ptx_per_kernel(tmp_path: Path, sm: int):
    golden = Path(__file__).resolve().parents[2] / "accy_core/tests/ir/golden/nn.accy"
    out = tmp_path / "out"
    result = subprocess.run(
        [sys.executable, "-m", "accy", "compile", str(golden), "--backend", "cuda",
         "--target", f"sm_{sm}", "--emit", "ptx", "-o", str(out)],
        capture_output=True, text=True, timeout=300,
    )
    assert result.returncode == 0, result.stderr
    files = sorted(out.glob("*.ptx"))
    assert files and all(f".target sm_{sm}" in f.read_text() for f in files)
    if find_ptxas():
        for f in files:
            check_ptx(f.read_text(), sm, f.stem)
