"""The isolating plugin loader and the accy.plugins facade, with plugins written to tmp_path."""

from __future__ import annotations

import textwrap
from importlib.metadata import EntryPoint

import accy.plugins as plugins
import pytest
from accy.backend import RecordingBackend
from accy.errors import BackendUnavailable, PluginError
from accy.plugins import PluginManager

_GOOD = """
from accy.backend import API_VERSION, BackendDescriptor, ProbeResult, RecordingBackend
from accy.plugins import hookimpl

@hookimpl
def accy_backends():
    return [
        BackendDescriptor("fake", API_VERSION, lambda: ProbeResult(True),
                          lambda: RecordingBackend("fake")),
        BackendDescriptor("absent", API_VERSION, lambda: ProbeResult(False, "no device here"),
                          lambda: RecordingBackend("absent")),
    ]

@hookimpl
def accy_pipelines():
    return [("fast", "canonicalize,cse")]
"""

_MODULES = {
    "good_plugin": _GOOD,
    "import_error_plugin": "import module_that_does_not_exist\n",
    "raising_plugin": """
        from accy.plugins import hookimpl

        @hookimpl
        def accy_backends():
            raise RuntimeError("driver table corrupt")

        @hookimpl
        def accy_passes():
            return []
    """,
    "misspelt_plugin": """
        from accy.plugins import hookimpl

        @hookimpl
        def accy_backendz():
            return []
    """,
    "not_a_list_plugin": """
        from accy.plugins import hookimpl

        @hookimpl
        def accy_kernel_families():
            return "sort"
    """,
    "version_plugin": """
        from accy.backend import BackendDescriptor, ProbeResult
        from accy.plugins import hookimpl

        @hookimpl
        def accy_backends():
            return [BackendDescriptor("future", 99, lambda: ProbeResult(True), object)]
    """,
    "duplicate_plugin": """
        from accy.backend import API_VERSION, BackendDescriptor, ProbeResult
        from accy.plugins import hookimpl

        @hookimpl
        def accy_backends():
            return [BackendDescriptor("fake", API_VERSION, lambda: ProbeResult(True), object)]
    """,
    "opens_badly_plugin": """
        from accy.backend import API_VERSION, BackendDescriptor, ProbeResult
        from accy.plugins import hookimpl

        def _open():
            raise OSError("libvulkan.so.1: cannot open shared object file")

        @hookimpl
        def accy_backends():
            return [BackendDescriptor("flaky", API_VERSION, lambda: ProbeResult(True), _open),
                    BackendDescriptor("odd", API_VERSION, lambda: ProbeResult(True), object)]
    """,
}


@pytest.fixture
def entry_points(tmp_path, monkeypatch):
    """Write the plugin modules and return a factory of entry points for the chosen ones."""
    for name, source in _MODULES.items():
        (tmp_path / f"{name}.py").write_text(textwrap.dedent(source))
    monkeypatch.syspath_prepend(str(tmp_path))

    def make(*names: str) -> list[EntryPoint]:
        return [EntryPoint(n.removesuffix("_plugin"), n, "accy") for n in names]

    return make


@pytest.fixture
def use_manager():
    """Install a manager in the facade for one test, then rediscover installed plugins."""
    yield lambda manager: plugins.reset_for_tests(manager)
    plugins.reset_for_tests()


def test_builtin_only_when_autoload_disabled(monkeypatch):
    monkeypatch.setenv("ACCY_DISABLE_PLUGIN_AUTOLOAD", "1")
    manager = PluginManager()
    assert manager.distributions == {"builtin": "accy-core"}
    assert list(manager.backends()) == ["recording"]
    assert manager.backends()["recording"].testing_only


def test_broken_plugins_are_reported_and_the_rest_works(entry_points):
    manager = PluginManager(entry_points=entry_points(
        "import_error_plugin", "good_plugin", "raising_plugin", "misspelt_plugin",
        "not_a_list_plugin", "version_plugin"))
    assert sorted(manager.backends()) == ["absent", "fake", "recording"]
    assert manager.items("accy_kernel_families") == []
    assert manager.items("accy_pipelines") == [("fast", "canonicalize,cse")]
    by_plugin = {f.plugin: f for f in manager.failures}
    assert sorted(by_plugin) == ["import_error", "misspelt", "not_a_list", "raising", "version"]
    imp = by_plugin["import_error"]
    assert imp.distribution == "unknown"
    assert imp.cause == "ModuleNotFoundError: No module named 'module_that_does_not_exist'"
    assert str(imp) == f"plugin 'import_error' (dist unknown) failed: {imp.cause}"
    assert by_plugin["raising"].cause == (
        "hook accy_backends raised RuntimeError: driver table corrupt")
    assert "accy_backendz" in by_plugin["misspelt"].cause
    assert by_plugin["not_a_list"].cause == "hook accy_kernel_families must return a list, got str"
    assert "backend API version 99, but accy-core implements 1" in by_plugin["version"].cause
    assert all(isinstance(f, PluginError) for f in manager.failures)


def test_duplicate_backend_names_both_providers(entry_points, use_manager):
    manager = PluginManager(entry_points=entry_points("good_plugin", "duplicate_plugin"))
    use_manager(manager)
    (failure,) = plugins.plugin_failures()
    assert failure.plugin == "duplicate"
    assert "backend 'fake' is provided by both plugin 'good' (dist unknown) and plugin " \
        "'duplicate' (dist unknown); uninstall one of them" in str(failure)
    with pytest.raises(PluginError, match="provided by both plugin 'good'"):
        plugins.open_backend("fake")


def test_facade_open_probe_and_unknown(entry_points, use_manager):
    use_manager(PluginManager(entry_points=entry_points("good_plugin", "opens_badly_plugin")))
    assert sorted(plugins.backend_descriptors()) == ["absent", "fake", "flaky", "odd", "recording"]
    fake = plugins.open_backend("fake")
    assert isinstance(fake, RecordingBackend) and plugins.open_backend("fake") is fake
    with pytest.raises(BackendUnavailable) as info:
        plugins.open_backend("absent")
    assert str(info.value) == "backend 'absent' is unavailable: no device here"
    assert info.value.reason == "no device here"
    with pytest.raises(BackendUnavailable, match=r"^unknown backend 'nope'; known: absent, fake, "
                       r"flaky, odd, recording$"):
        plugins.open_backend("nope")
    with pytest.raises(BackendUnavailable, match="failed to open: OSError: libvulkan"):
        plugins.open_backend("flaky")
    with pytest.raises(Exception, match="does not implement the backend protocol: missing name"):
        plugins.open_backend("odd")
    assert plugins.extra_pipelines() == [("fast", "canonicalize,cse")]
    assert plugins.extra_passes() == [] and plugins.kernel_families() == []


def test_builtin_recording_backend_through_the_facade(use_manager, monkeypatch):
    monkeypatch.setenv("ACCY_DISABLE_PLUGIN_AUTOLOAD", "yes")
    use_manager(None)
    be = plugins.open_backend("recording")
    assert be.capabilities().backend == "recording"
    assert plugins.get_plugin_manager() is plugins.get_plugin_manager()
    assert plugins.plugin_failures() == []
