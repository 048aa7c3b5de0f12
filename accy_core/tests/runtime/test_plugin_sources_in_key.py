"""The source of plugins from outside this repository is part of the pipeline cache's and the
jit index's key: editing or upgrading a third-party family never serves a launch graph its
old code made."""

from __future__ import annotations

import importlib
import os
import sys
import types

import pytest
from accy import plugins
from accy.plugins.entry_cache import CachedEntryPoint
from accy.plugins.manager import PluginManager
from accy.runtime import pipeline_cache
from accy.runtime.pipeline_cache import source_fingerprint


@pytest.fixture
def clean_caches():
    pipeline_cache._installed_plugin_tops.cache_clear()
    pipeline_cache._tree_fingerprint.cache_clear()
    yield
    pipeline_cache._installed_plugin_tops.cache_clear()
    pipeline_cache._tree_fingerprint.cache_clear()
    plugins.reset_for_tests()


def _touch(path, text):
    path.write_text(text)
    st = os.stat(path)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))


def test_an_installed_third_party_plugin_package_is_in_the_key(tmp_path, monkeypatch,
                                                               clean_caches):
    pkg = tmp_path / "thirdfam_pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "plugin.py").write_text("X = 1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    before = source_fingerprint("accy_kernels")
    pipeline_cache._installed_plugin_tops.cache_clear()
    monkeypatch.setattr("accy.plugins.entry_cache._LAST", {"accy": (
        CachedEntryPoint("thirdfam", "thirdfam_pkg.plugin", "accy", "thirdfam"),)})
    with_plugin = source_fingerprint("accy_kernels")
    assert with_plugin != before
    _touch(pkg / "plugin.py", "X = 22\n")  # an edited (or upgraded) plugin
    pipeline_cache._tree_fingerprint.cache_clear()  # as a new process
    assert source_fingerprint("accy_kernels") != with_plugin


def test_a_plugin_registered_by_hand_from_one_file_is_stamped(tmp_path, monkeypatch, request,
                                                              clean_caches):
    mod = tmp_path / "handfam_mod.py"
    mod.write_text("def accy_kernel_families():\n    return []\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    module = importlib.import_module("handfam_mod")
    request.addfinalizer(lambda: sys.modules.pop("handfam_mod", None))
    before = source_fingerprint()
    manager = PluginManager(autoload=False)
    assert manager.register(module, "handfam", "handfam")
    plugins.reset_for_tests(manager)
    registered = source_fingerprint()
    assert registered != before
    _touch(mod, "def accy_kernel_families():\n    return [1]\n")
    assert source_fingerprint() != registered  # a one-file module is stamped on every key


def test_a_plugin_without_a_source_file_is_shared_with_no_other_process(clean_caches):
    module = types.ModuleType("livefam_nofile")  # defined interactively: nothing to stamp
    module.accy_kernel_families = lambda: []
    sys.modules["livefam_nofile"] = module
    try:
        manager = PluginManager(autoload=False)
        assert manager.register(module, "livefam", "livefam")
        plugins.reset_for_tests(manager)
        assert pipeline_cache._plugin_stamp("livefam_nofile").startswith(
            "livefam_nofile|unstamped|")
        pipeline_cache._process_nonce.cache_clear()  # another process: another nonce
        first = source_fingerprint()
        pipeline_cache._process_nonce.cache_clear()
        assert source_fingerprint() != first
    finally:
        del sys.modules["livefam_nofile"]
        pipeline_cache._process_nonce.cache_clear()
