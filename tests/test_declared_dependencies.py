"""Every third-party module a package imports is declared in its pyproject.toml.

A static scan (``ast``) of each package's ``src/``: top-level names of ``import`` and
``from ... import`` statements, anywhere in the file (lazy imports count), minus the standard
library and accy's own packages, must be a dependency or an optional-dependency (extra) of
that package. An undeclared import is what made ``accy profile`` crash on a clean install
(tqdm; issue 13 point 1).
"""

from __future__ import annotations

import ast
import re
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ["accy_core", "accy_backend_cpu", "accy_backend_vulkan", "accy_backend_cuda",
            "accy_backend_opencl", "accy_kernels"]
FIRST_PARTY = {"accy", "accy_backend_cpu", "accy_backend_vulkan", "accy_backend_cuda",
               "accy_backend_opencl", "accy_kernels"}
# import name -> distribution name, where they differ
DISTRIBUTION = {"cuda": "cuda-bindings", "yaml": "pyyaml", "llvmlite": "llvmlite"}


def _requirement_name(spec: str) -> str:
    return re.split(r"[\s<>=!~;\[(]", spec.strip(), maxsplit=1)[0].lower().replace("_", "-")


def _declared(package: str) -> tuple[set[str], set[str]]:
    project = tomllib.loads((ROOT / package / "pyproject.toml").read_text())["project"]
    required = {_requirement_name(s) for s in project.get("dependencies", [])}
    extras = {_requirement_name(s) for group in project.get("optional-dependencies", {}).values()
              for s in group}
    return required, extras


def _imports(package: str) -> dict[str, str]:
    """Top-level third-party import name -> first file importing it."""
    found: dict[str, str] = {}
    for path in sorted((ROOT / package / "src").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            for name in names:
                top = name.split(".")[0]
                if top not in sys.stdlib_module_names and top not in FIRST_PARTY:
                    found.setdefault(top, str(path.relative_to(ROOT)))
    return found


@pytest.mark.parametrize("package", PACKAGES)
def test_every_import_is_declared(package):
    required, extras = _declared(package)
    missing = {name: where for name, where in _imports(package).items()
               if DISTRIBUTION.get(name, name).lower().replace("_", "-")
               not in required | extras}
    assert not missing, f"{package}: imported but not declared in pyproject.toml: {missing}"


def test_core_uses_one_console_library():
    imports = _imports("accy_core")
    assert "tqdm" not in imports and "rich" in imports
    assert "matplotlib" in _declared("accy_core")[1]  # an extra: accy-core[plots]
