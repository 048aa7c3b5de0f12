"""Module size budget (STYLE.md): aim for 150-250 lines, justify past 500, never past 800.

Counts physical lines of every Python module in the packages and tests; generated code
(folders named ``_generated``) is exempt. A module over 500 lines must say why in its
docstring (a line starting with ``Size:``).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ["accy_core", "accy_backend_cpu", "accy_backend_vulkan", "accy_backend_cuda",
            "accy_backend_opencl", "accy_kernels", "tests"]
CEILING = 800
JUSTIFY_ABOVE = 500


def _modules() -> list[Path]:
    out = []
    for pkg in PACKAGES:
        for p in sorted((ROOT / pkg).rglob("*.py")):
            if "_generated" in p.parts or "build" in p.parts or ".venv" in p.parts:
                continue
            out.append(p)
    return out


def _lines(p: Path) -> int:
    return len(p.read_text(encoding="utf-8").splitlines())


def test_no_module_exceeds_the_ceiling():
    over = {str(p.relative_to(ROOT)): _lines(p) for p in _modules() if _lines(p) > CEILING}
    assert not over, f"modules over {CEILING} lines (split them): {over}"


@pytest.mark.parametrize("path", [p for p in _modules() if _lines(p) > JUSTIFY_ABOVE],
                         ids=lambda p: str(p.relative_to(ROOT)))
def test_large_modules_justify_their_size(path):
    doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
    assert any(line.strip().startswith("Size:") for line in doc.splitlines()), (
        f"{path.name} has {_lines(path)} lines: split it or justify with a 'Size:' docstring line"
    )
