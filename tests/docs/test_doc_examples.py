"""The Python examples of README.md and every page in docs/ run as written.

Fragments that need context from the surrounding text are fenced as ``python skip``;
docs/ir.md and docs/families.md are run, console commands included, by their own tests.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.docs.markdown_run import REPO, DocRun

OWN_TESTS = {"ir.md", "families.md"}
PAGES = [REPO / "README.md",
         *(p for p in sorted((REPO / "docs").glob("*.md")) if p.name not in OWN_TESTS)]


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(REPO)))
def test_python_examples_run(page: Path, tmp_path: Path):
    DocRun(page, tmp_path).run()
