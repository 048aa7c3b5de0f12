"""Test-run set-up for every test folder: the test plugins under ``tests/plugins/``.

The test plugins (a deliberately broken plugin, an example kernel family) are not installed
into the development ``.venv`` (``scripts/setup.sh`` leaves them out, so a user's
``accy backends`` reports no broken plugin). For the test run only, this file makes them
importable and discoverable: each plugin's ``src/`` folder goes on ``sys.path``, and a
generated ``.dist-info`` (``METADATA`` and ``entry_points.txt``, from the plugin's
``pyproject.toml``) in a temporary folder lets ``importlib.metadata`` find its ``accy``
entry points. ``PYTHONPATH`` gets the same folders, so the ``accy`` subprocesses that the
command-line tests start see the plugins too. Everything is undone when the run ends.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import tomllib
from pathlib import Path

TEST_PLUGINS = Path(__file__).resolve().parent / "tests" / "plugins"
"""Folders of the test plugins, one installable project each."""

_STATE: dict[str, object] = {}


def _dist_info(project: dict, into: Path) -> None:
    name, version = project["name"], project["version"]
    info = into / f"{name.replace('-', '_')}-{version}.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n"
        f"Summary: {project.get('description', '')}\n")
    lines = []
    for group, entries in project.get("entry-points", {}).items():
        lines.append(f"[{group}]")
        lines += [f"{key} = {value}" for key, value in entries.items()]
    (info / "entry_points.txt").write_text("\n".join(lines) + "\n")


def register_test_plugins() -> list[str]:
    """Put every test plugin on the path for this process and its children; return the
    folders added (idempotent)."""
    if "paths" in _STATE:
        return _STATE["paths"]  # type: ignore[return-value]
    meta = Path(tempfile.mkdtemp(prefix="accy-test-plugins-"))
    paths = [str(meta)]
    for pyproject in sorted(TEST_PLUGINS.glob("*/pyproject.toml")):
        _dist_info(tomllib.loads(pyproject.read_text())["project"], meta)
        paths.append(str(pyproject.parent / "src"))
    sys.path[:0] = paths
    _STATE.update(paths=paths, meta=meta, pythonpath=os.environ.get("PYTHONPATH"))
    os.environ["PYTHONPATH"] = os.pathsep.join([*paths, os.environ.get("PYTHONPATH", "")]
                                               ).rstrip(os.pathsep)
    return paths


def pytest_configure(config) -> None:  # noqa: ARG001  (pytest hook signature)
    register_test_plugins()


def pytest_unconfigure(config) -> None:  # noqa: ARG001
    paths = _STATE.pop("paths", None)
    if paths is None:
        return
    for p in paths:
        if p in sys.path:
            sys.path.remove(p)
    old = _STATE.pop("pythonpath")
    if old is None:
        os.environ.pop("PYTHONPATH", None)
    else:
        os.environ["PYTHONPATH"] = old  # type: ignore[assignment]
    shutil.rmtree(_STATE.pop("meta"), ignore_errors=True)  # type: ignore[arg-type]
