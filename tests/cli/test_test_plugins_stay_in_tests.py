"""The test plugins live in the test run only; the recording backend is listed when asked for.

``scripts/setup.sh`` (the README's set-up) installs no package from ``tests/plugins/``; the
root ``conftest.py`` registers them for pytest. Outside that registration the real ``accy``
entry point, run in a subprocess, reports no broken plugin, lists no example family and
lists the testing-only ``recording`` backend only with ``--all`` (issue 13 point 4).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def accy_cli(*args: str, env: dict[str, str]):
    script = Path(sys.executable).with_name("accy")
    cmd = [str(script)] if script.exists() else [sys.executable, "-m", "accy"]
    return subprocess.run([*cmd, *args], capture_output=True, text=True, timeout=300,
                          check=False, env=env)


@pytest.fixture
def user_env() -> dict[str, str]:
    """os.environ without the test-run registration of tests/plugins (root conftest.py)."""
    env = dict(os.environ)
    kept = [p for p in env.get("PYTHONPATH", "").split(os.pathsep)
            if p and "accy-test-plugins-" not in p and "tests/plugins" not in Path(p).as_posix()]
    env["PYTHONPATH"] = os.pathsep.join(kept)
    probe = subprocess.run(
        [sys.executable, "-c", "import importlib.metadata as m; print(sorted("
         "d.metadata['Name'] for d in m.distributions() if d.metadata['Name'] in "
         "('accy-broken-plugin', 'accy-example-family')))"],
        capture_output=True, text=True, env=env, timeout=60, check=True)
    if probe.stdout.strip() != "[]":
        pytest.skip(f"this .venv has test plugins installed ({probe.stdout.strip()}) by an older "
                    "scripts/setup.sh; pip uninstall accy-broken-plugin accy-example-family")
    return env


def test_setup_script_installs_no_test_plugin():
    text = (ROOT / "scripts" / "setup.sh").read_text()
    code = "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("#"))
    assert "tests/plugins" not in code
    assert not re.search(r"-e\s+\S*tests/plugins", (ROOT / "pyproject.toml").read_text())


def test_accy_backends_in_the_user_environment(user_env):
    res = accy_cli("backends", env=user_env)
    assert res.returncode == 0, res.stderr
    assert "failed" not in res.stdout and "broken" not in res.stdout, res.stdout
    assert not any(line.startswith("recording:") for line in res.stdout.splitlines())
    assert any(line.startswith("cpu: available") for line in res.stdout.splitlines())

    res = accy_cli("backends", "--all", env=user_env)
    assert res.returncode == 0, res.stderr
    assert "recording: available (in-memory recorder) [testing only]" in res.stdout.splitlines()

    res = accy_cli("kernels", env=user_env)
    assert res.returncode == 0, res.stderr
    assert "axpy" not in res.stdout


def test_the_test_run_sees_the_test_plugins():
    import importlib.metadata

    from accy.plugins import plugin_failures, reset_for_tests

    reset_for_tests()
    assert importlib.metadata.distribution("accy-example-family").version == "0.1.0"
    assert any(f.plugin == "broken" for f in plugin_failures())
