"""An installed plugin that cannot be imported is reported, and the other backends still work.

``tests/plugins/accy_broken_plugin`` is registered for the test run by the repository's root
``conftest.py`` (it is never installed into the development ``.venv``); run outside pytest's
set-up, these tests skip.
"""

from __future__ import annotations

import importlib.metadata
import subprocess
import sys

import numpy as np
import pytest

_EXPECTED = ("plugin 'broken' (dist accy-broken-plugin) failed: ImportError: "
             "accy_broken_plugin fails on import on purpose")


@pytest.fixture(scope="module", autouse=True)
def _broken_plugin_installed():
    try:
        importlib.metadata.distribution("accy-broken-plugin")
    except importlib.metadata.PackageNotFoundError:
        pytest.skip("tests/plugins/accy_broken_plugin is not registered (root conftest.py)")


def test_accy_backends_lists_the_broken_plugin_with_its_error():
    proc = subprocess.run([sys.executable, "-m", "accy", "backends", "--all"],
                          capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert any(line.startswith(_EXPECTED) for line in lines), proc.stdout
    assert "recording: available (in-memory recorder) [testing only]" in lines


def test_recording_backend_still_works_next_to_the_broken_plugin():
    from accy.backend import Geometry
    from accy.kernel import KernelBuilder
    from accy.plugins import open_backend, plugin_failures, reset_for_tests

    reset_for_tests()
    assert any(f.plugin == "broken" and f.distribution == "accy-broken-plugin"
               for f in plugin_failures())
    kb = KernelBuilder("double", 4)
    y, x = kb.buffer("y", "i32", "write"), kb.buffer("x", "i32", "read")
    i = kb.global_id()
    kb.store(y, i, x[i] * 2)
    be = open_backend("recording")
    loaded = be.load(be.compile(kb.build()))
    out, inp = be.allocate(16), be.allocate(16)
    be.write(inp, np.arange(4, dtype=np.int32))
    be.launch(loaded, Geometry(1, 4), [out, inp], [])
    assert be.read(out, np.zeros(4, np.int32)).tolist() == [0, 2, 4, 6]
    be.free(out)
    be.free(inp)
    be.destroy(loaded)
