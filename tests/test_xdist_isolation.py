"""Each pytest-xdist worker has its own accy cache and Hypothesis database (root conftest.py),
so tests that count cache files or replay examples never see another worker's."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT_CONFTEST = str(Path(__file__).resolve().parents[1] / "conftest.py")


@pytest.fixture
def root_conftest(pytestconfig):
    """The root conftest.py module as pytest loaded it (found by file: its module name
    depends on the import mode)."""
    for module in pytestconfig.pluginmanager.get_plugins():
        where = getattr(module, "__file__", None)
        if where and str(Path(where).resolve()) == ROOT_CONFTEST:
            return module
    pytest.fail("the root conftest.py is not loaded")


def test_cache_is_private_to_this_process(root_conftest):
    cache = os.environ["ACCY_CACHE_DIR"]
    assert cache == root_conftest.use_private_cache()
    worker = root_conftest.xdist_worker()
    assert worker == os.environ.get("PYTEST_XDIST_WORKER", "")
    if worker:
        assert worker in Path(cache).name or Path(cache).name == worker


def test_hypothesis_database_is_per_worker(root_conftest):
    pytest.importorskip("hypothesis")
    from hypothesis.configuration import storage_directory

    home = storage_directory(intent_to_write=False).path
    worker = root_conftest.xdist_worker()
    if not worker:
        pytest.skip("not run by a pytest-xdist worker: the database is Hypothesis's default")
    assert home.name == worker and home.parent.name == ".hypothesis"


def test_kept_cache_gets_one_folder_per_worker(root_conftest, monkeypatch, tmp_path):
    monkeypatch.setenv("ACCY_TEST_CACHE_DIR", str(tmp_path / "keep"))
    monkeypatch.setenv("PYTEST_XDIST_WORKER", "gw7")
    monkeypatch.setattr(root_conftest, "_STATE", {})
    monkeypatch.setenv("ACCY_CACHE_DIR", os.environ["ACCY_CACHE_DIR"])  # restored after
    assert root_conftest.use_private_cache() == str(tmp_path / "keep" / "gw7")
    assert (tmp_path / "keep" / "gw7").is_dir()


def _config(args_source, **options):
    from types import SimpleNamespace

    option = SimpleNamespace(**{"numprocesses": None, "usepdb": False, "tx": None,
                                "dist": "no", **options})
    return SimpleNamespace(option=option, args_source=args_source,
                           pluginmanager=SimpleNamespace(hasplugin=lambda name: True))


def test_whole_suite_defaults_to_one_worker_per_core(root_conftest):
    config = _config(pytest.Config.ArgsSource.TESTPATHS)
    root_conftest.pytest_cmdline_main(config)
    assert (config.option.numprocesses, config.option.dist) == ("auto", "loadgroup")


@pytest.mark.parametrize(("source", "options"), [
    (pytest.Config.ArgsSource.ARGS, {}),                       # named paths: serial
    (pytest.Config.ArgsSource.TESTPATHS, {"numprocesses": 0}),  # -n 0
    (pytest.Config.ArgsSource.TESTPATHS, {"usepdb": True}),     # --pdb
])
def test_named_paths_and_explicit_choices_are_left_alone(root_conftest, source, options):
    config = _config(source, **options)
    root_conftest.pytest_cmdline_main(config)
    assert config.option.numprocesses == options.get("numprocesses")
    assert config.option.dist == "no"
