"""docs/families.md cannot rot: the family it describes is built from the page alone,
installed, listed by ``accy kernels``, and its own tests pass on every backend."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
import setuptools

from tests.docs.markdown_run import REPO, DocRun, blocks

PAGE = REPO / "docs" / "families.md"


def _can_build_without_isolation() -> str | None:
    version = tuple(int(p) for p in setuptools.__version__.split(".")[:2])
    if version < (70, 1) and importlib.util.find_spec("wheel") is None:
        return ("building the family offline needs setuptools >= 70.1 or the 'wheel' "
                "package (scripts/setup.sh installs it)")
    return None


def test_page_lists_every_file_of_the_layout():
    files = {b.options["file"] for b in blocks(PAGE) if "file" in b.options}
    assert {"pyproject.toml", "tests/conftest.py", "tests/test_histogram.py",
            "src/accy_histogram/plugin.py"} <= files


@pytest.mark.slow
def test_family_from_the_page_installs_lists_and_passes_its_tests(tmp_path: Path):
    reason = _can_build_without_isolation()
    if reason:
        pytest.skip(reason)
    run = DocRun(PAGE, tmp_path)
    run.run()
    assert run.site is not None and any(run.site.glob("accy_histogram-*.dist-info"))
    assert any("histogram.atomic" in entry for entry in run.log)
