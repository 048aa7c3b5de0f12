"""docs/ir.md cannot rot: its op reference is the registry's, and its examples run."""

from __future__ import annotations

import re
from pathlib import Path

from accy.ir import op_names
from accy.ir.opdoc import NAMESPACES, update_file

from tests.docs.markdown_run import REPO, DocRun, blocks

PAGE = REPO / "docs" / "ir.md"


def test_op_reference_is_generated_from_the_registry():
    assert update_file(PAGE, check=True), (
        "docs/ir.md's op reference is out of date: run python -m accy.ir.opdoc docs/ir.md")


def test_every_registered_op_is_documented():
    documented = set(re.findall(r"^\| `([a-z_]+\.[a-z_]+)` \|", PAGE.read_text(), re.M))
    ours = {n for n in op_names() if n.split(".", 1)[0] in NAMESPACES}
    assert ours - documented == set(), f"ops missing from docs/ir.md: {ours - documented}"
    assert documented - ours == set(), f"docs/ir.md documents unknown ops: {documented - ours}"


def test_page_has_a_worked_example_and_invalid_examples():
    kinds = [(b.lang, b.has("invalid")) for b in blocks(PAGE)]
    assert ("accy", False) in kinds and ("accy", True) in kinds and ("console", False) in kinds


def test_examples_run_as_written(tmp_path: Path):
    DocRun(PAGE, tmp_path).run()
