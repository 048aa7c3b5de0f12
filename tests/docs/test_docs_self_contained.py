"""Every doc in the repository stands on its own: links and paths it names exist in the
repository, and it refers to nothing outside it (design notes, a shared folder, absolute
paths of one machine)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.docs.markdown_run import REPO

PAGES = sorted([REPO / "README.md", *(REPO / "docs").glob("*.md"),
                *REPO.glob("accy_*/README.md")])
OUTSIDE = ("ARCHITECTURE.md", "STYLE.md", "LLVM-TARGETS.md", "../shared", "/work/",
           "shared/data")
TOP = ("accy_core/", "accy_backend_cpu/", "accy_backend_vulkan/", "accy_backend_cuda/",
       "accy_kernels/", "docs/", "tests/", "scripts/", "examples/", "bench/", ".ci/")
_LINK = re.compile(r"\]\(([^)\s]+)\)")
_CODE = re.compile(r"`([^`\s]+)`")


def _ids(p: Path) -> str:
    return str(p.relative_to(REPO))


@pytest.mark.parametrize("page", PAGES, ids=_ids)
def test_refers_to_nothing_outside_the_repository(page: Path):
    text = page.read_text()
    found = [name for name in OUTSIDE if name in text]
    assert not found, f"{_ids(page)} refers to {found}, which a clone does not have"


@pytest.mark.parametrize("page", PAGES, ids=_ids)
def test_relative_links_resolve(page: Path):
    for target in _LINK.findall(page.read_text()):
        if re.match(r"[a-z]+:", target) or target.startswith("#"):
            continue
        path = (page.parent / target.split("#", 1)[0]).resolve()
        assert path.exists(), f"{_ids(page)}: link {target!r} points at nothing"
        assert REPO in path.parents or path == REPO, f"{_ids(page)}: {target!r} leaves the repo"


@pytest.mark.parametrize("page", PAGES, ids=_ids)
def test_repository_paths_in_code_spans_exist(page: Path):
    for token in _CODE.findall(page.read_text()):
        path = token.rstrip(".,;:)").split("::", 1)[0]
        if not path.startswith(TOP) or any(c in path for c in "*<>{}$[]"):
            continue
        assert (REPO / path).exists(), f"{_ids(page)} names {token!r}, not in the repository"
