"""Every package carries a licence, a readme and URLs; the repository has a LICENSE.

Static checks of each ``pyproject.toml`` (issue 13 point 7); ``scripts/ci-wheels.sh``
builds the wheels and checks the same fields in their ``METADATA``.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ["accy_core", "accy_backend_cpu", "accy_backend_vulkan", "accy_backend_cuda",
            "accy_backend_opencl", "accy_kernels"]


def test_repository_licence_is_apache_2():
    text = (ROOT / "LICENSE").read_text()
    assert "Apache License" in text and "Version 2.0, January 2004" in text


@pytest.mark.parametrize("package", PACKAGES)
def test_package_metadata(package):
    folder = ROOT / package
    project = tomllib.loads((folder / "pyproject.toml").read_text())["project"]
    assert project["license"] == "Apache-2.0"
    for name in project["license-files"]:
        assert (folder / name).read_text() == (ROOT / "LICENSE").read_text(), name
    readme = folder / project["readme"]
    assert readme.read_text().startswith(f"# {project['name']}\n")
    # no made-up addresses: URLs are added once the project has a public home
    assert "accy.dev" not in (folder / "pyproject.toml").read_text()
    assert project["authors"] and project["description"]
