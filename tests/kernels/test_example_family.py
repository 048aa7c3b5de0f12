"""The third-party example family (tests/plugins/accy_example_family) is discovered and runs.

The example package is registered for the test run by the repository's root ``conftest.py``
(it is never installed into the development ``.venv``); outside pytest's set-up it skips.
"""

from __future__ import annotations

import importlib.metadata
import subprocess
import sys

import numpy as np
import pytest


@pytest.fixture(scope="module", autouse=True)
def _installed():
    try:
        importlib.metadata.distribution("accy-example-family")
    except importlib.metadata.PackageNotFoundError:
        pytest.skip("tests/plugins/accy_example_family is not registered (root conftest.py)")


def test_discovered_through_the_entry_point():
    from accy.families import families

    fam = families()["axpy"]
    assert fam.provider == "accy-example-family"
    assert fam.full_names() == ["axpy.simple"]


def test_runs(backend):
    from accy_example_family import axpy, reference

    x = np.arange(1001, dtype=np.float32)
    y = np.ones(1001, np.float32)
    np.testing.assert_allclose(axpy(2.5, x, y, backend=backend), reference(2.5, x, y))


def test_listed_by_accy_kernels():
    proc = subprocess.run([sys.executable, "-m", "accy", "kernels"], capture_output=True,
                          text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stderr
    assert "axpy.simple" in proc.stdout and "spmv.sell" in proc.stdout
