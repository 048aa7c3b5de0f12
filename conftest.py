"""Test-run set-up for every test folder: the test plugins under ``tests/plugins/``, and a
temporary cache instead of the user's.

The test plugins (a deliberately broken plugin, an example kernel family) are not installed
into the development ``.venv`` (``scripts/setup.sh`` leaves them out, so a user's
``accy backends`` reports no broken plugin). For the test run only, this file makes them
importable and discoverable: each plugin's ``src/`` folder goes on ``sys.path``, and a
generated ``.dist-info`` (``METADATA`` and ``entry_points.txt``, from the plugin's
``pyproject.toml``) in a temporary folder lets ``importlib.metadata`` find its ``accy``
entry points. ``PYTHONPATH`` gets the same folders, so the ``accy`` subprocesses that the
command-line tests start see the plugins too. Everything is undone when the run ends.

Before any test module is imported, ``ACCY_CACHE_DIR`` points at a fresh private directory
(removed when the run ends) and ``ACCY_TUNING_CACHE`` is unset, so the artifact, tuning and
Vulkan pipeline caches of the run, and of every ``accy`` subprocess a test starts, live there
and never in the user's cache. Tests of caching set their own directory with
``monkeypatch.setenv``. ``ACCY_TEST_CACHE_DIR=/some/dir`` reuses (and keeps) a directory
instead, e.g. to keep compiled artifacts between local runs.

The whole suite runs in parallel with pytest-xdist: a run of the configured ``testpaths``
(no paths on the command line, as ``.ci/run`` and the README's ``.venv/bin/python -m pytest
-q``) that names no ``-n`` (and no ``--pdb``, which xdist refuses) becomes ``-n auto --dist
loadgroup`` (one worker per core; tests marked ``xdist_group`` share a worker), by
:func:`pytest_cmdline_main` below. A run of named paths stays serial unless it says ``-n``:
two workers cost more to start than a few tests take. This is done here rather than with
``-n auto`` in ``addopts``, where ``-p no:xdist`` (serial) and an environment without xdist
would fail with "unrecognized arguments: -n". Every worker
(``PYTEST_XDIST_WORKER=gw0``, ``gw1``, ...) is its own process with its own private cache
(``ACCY_TEST_CACHE_DIR`` gets one sub-folder per worker) and its own Hypothesis database
(``.hypothesis/<worker>``), so no two workers write the same cache file. A worker that crashes
ends the run (``--max-worker-restart 0``), and, with pytest-timeout installed, a test that
runs past ``SUITE_TIMEOUT_S`` fails by name: neither can leave the suite waiting for good.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import tomllib
from pathlib import Path

import pytest

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


_CACHE_VARIABLES = ("ACCY_CACHE_DIR", "ACCY_TUNING_CACHE")


def xdist_worker() -> str:
    """Name of this pytest-xdist worker (``gw0``, ``gw1``, ...), or ``""`` outside a worker."""
    return os.environ.get("PYTEST_XDIST_WORKER", "")


def use_private_hypothesis_database() -> None:
    """Give this xdist worker its own Hypothesis example database (``.hypothesis/<worker>``);
    nothing changes outside a worker. Two processes replaying and shrinking into one
    directory database race on its files."""
    worker = xdist_worker()
    if not worker:
        return
    try:
        from hypothesis.configuration import set_hypothesis_home_dir
    except ImportError:  # pragma: no cover - hypothesis is a declared test dependency
        return
    set_hypothesis_home_dir(Path.cwd() / ".hypothesis" / worker)


def use_private_cache() -> str:
    """Point this process's (and its children's) accy caches at a private directory for the
    run; return it (idempotent)."""
    if "cache" in _STATE:
        return _STATE["cache"]  # type: ignore[return-value]
    _STATE["cache_env"] = {name: os.environ.get(name) for name in _CACHE_VARIABLES}
    worker = xdist_worker()
    keep = os.environ.get("ACCY_TEST_CACHE_DIR", "").strip()
    if keep:
        path = os.path.join(keep, worker) if worker else keep
        os.makedirs(path, mode=0o700, exist_ok=True)
    else:
        path = tempfile.mkdtemp(prefix=f"accy-test-cache-{worker or 'main'}-")  # mode 0700
        _STATE["cache_tmp"] = path
    os.environ["ACCY_CACHE_DIR"] = path
    os.environ.pop("ACCY_TUNING_CACHE", None)
    _STATE["cache"] = path
    return path


def _restore_cache() -> None:
    if _STATE.pop("cache", None) is None:
        return
    for name, value in _STATE.pop("cache_env").items():  # type: ignore[union-attr]
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value
    tmp = _STATE.pop("cache_tmp", None)
    if tmp is not None:
        shutil.rmtree(tmp, ignore_errors=True)  # type: ignore[arg-type]


#: per-test limit (seconds, pytest-timeout) of a whole-suite run; the slowest test takes ~100 s
SUITE_TIMEOUT_S = 900.0


@pytest.hookimpl(tryfirst=True)  # before xdist's own, which turns 'auto' into a count
def pytest_cmdline_main(config) -> None:
    """Default to ``-n auto --dist loadgroup`` for a whole-suite run where pytest-xdist is
    loaded and the command line chose no ``-n`` (nor ``--pdb``, which xdist refuses); see the
    module docstring."""
    option = config.option
    if (not config.pluginmanager.hasplugin("xdist") or hasattr(config, "workerinput")
            or getattr(option, "numprocesses", 0) is not None or option.usepdb
            or getattr(option, "tx", None)
            or config.args_source != pytest.Config.ArgsSource.TESTPATHS):
        return
    option.numprocesses = "auto"
    if option.dist == "no":
        option.dist = "loadgroup"
    if getattr(option, "maxworkerrestart", None) is None:
        # a crashed worker ends the run (its test is reported failed) rather than being
        # replaced: pytest-xdist 3.8's load-group scheduler can hang for good after a
        # replacement (pytest-xdist#1323, #1378), which turned one segfault into a CI timeout
        option.maxworkerrestart = "0"
    if config.pluginmanager.hasplugin("timeout") and not getattr(option, "timeout", None):
        option.timeout = SUITE_TIMEOUT_S  # a hung test fails by name instead of stalling CI


def pytest_configure(config) -> None:  # noqa: ARG001  (pytest hook signature)
    register_test_plugins()
    use_private_cache()
    use_private_hypothesis_database()


# Also now, at import: pytest imports the initial conftest files (tests/conftest.py, whose
# ``backend`` fixture lists the backends at import) before any pytest_configure runs, and
# accy's plugin manager, once built there, would never see the test plugins.
register_test_plugins()


def pytest_unconfigure(config) -> None:  # noqa: ARG001
    _restore_cache()
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
