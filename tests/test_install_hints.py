"""No message tells a user to ``pip install`` one of accy's own packages by name: they are
not published on PyPI, so such a command fails. Messages use
``accy.errors.install_hint`` (install from a clone of the repository) instead."""

from __future__ import annotations

import re
from pathlib import Path

from accy.errors import install_hint

REPO = Path(__file__).resolve().parents[1]
_BY_NAME = re.compile(r"pip install\s+(?:-e\s+)?['\"]?accy[-_][a-z_-]+(?:\[[^\]]*\])?['\"]?(?!/)")


def test_no_source_suggests_installing_an_unpublished_package_by_name():
    bad = []
    for path in sorted(REPO.glob("accy_*/src/**/*.py")):
        for k, line in enumerate(path.read_text().splitlines(), start=1):
            m = _BY_NAME.search(line)
            if m and "./" not in m.group(0):
                bad.append(f"{path.relative_to(REPO)}:{k}: {m.group(0)}")
    assert not bad, "pip commands for packages that are not on PyPI:\n" + "\n".join(bad)


def test_install_hint_points_at_the_repository():
    assert install_hint("accy_kernels") == (
        "not on PyPI: pip install ./accy_kernels in a clone of the accy repository")
    assert "'./accy_core[dask]'" in install_hint("accy_core", "dask")
    assert (REPO / "accy_kernels" / "pyproject.toml").exists()
