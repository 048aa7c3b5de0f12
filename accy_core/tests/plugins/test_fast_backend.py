"""Opening a backend from the recorded backend table: only the plugin the table names is
imported (no pluggy, no full discovery), and anything unexpected falls back to discovery."""

from __future__ import annotations

import textwrap

import accy.plugins as plugins
import pytest
from accy.errors import BackendUnavailable
from accy.plugins import entry_cache, fast_backend

_PLUGIN = '''
from accy.backend import API_VERSION, BackendDescriptor, ProbeResult
from accy.backend.recording import RecordingBackend
from accy.plugins.fast_backend import mark_hookimpl

@mark_hookimpl
def accy_backends():
    return [BackendDescriptor(name={name!r}, api_version=API_VERSION,
                              probe=lambda: ProbeResult(True, ""), open=RecordingBackend)]
'''


@pytest.fixture
def site(tmp_path, monkeypatch):
    """A private cache, and a fake distribution whose plugin provides backend 'fastbe'."""
    monkeypatch.setenv("ACCY_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("ACCY_DISABLE_DISK_CACHE", raising=False)
    monkeypatch.delenv("ACCY_DISABLE_PLUGIN_AUTOLOAD", raising=False)
    directory = tmp_path / "site"
    (directory / "fake_fast-0.1.dist-info").mkdir(parents=True)
    (directory / "fake_fast-0.1.dist-info" / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: fake-fast\nVersion: 0.1\n")
    (directory / "fake_fast-0.1.dist-info" / "entry_points.txt").write_text(
        "[accy]\nfastplug = fake_fast_plugin\n")
    (directory / "fake_fast_plugin.py").write_text(textwrap.dedent(_PLUGIN.format(
        name="fastbe")))
    monkeypatch.syspath_prepend(str(directory))
    plugins.reset_for_tests()
    yield directory
    plugins.reset_for_tests()


def test_marker_sets_pluggys_options():
    import pluggy

    def hook():
        return []

    expected = pluggy.HookimplMarker("accy")(lambda: [])
    assert fast_backend.mark_hookimpl(hook).accy_impl == expected.accy_impl


def test_recorded_table_opens_the_backend_without_discovery(site):
    assert fast_backend.descriptor("fastbe") is None  # nothing recorded yet
    entry_cache.store_backends("accy", {"fastbe": "fastplug"})
    assert entry_cache.entry_points_and_backends("accy")[1] == {"fastbe": "fastplug"}
    desc = fast_backend.descriptor("fastbe")
    assert desc is not None and desc.name == "fastbe"
    backend = plugins.open_backend("fastbe")
    assert backend.name == "recording"
    assert plugins._manager is None  # no full discovery ran


def test_a_table_that_no_longer_holds_falls_back_to_discovery(site):
    entry_cache.store_backends("accy", {"other": "fastplug", "gone": "noplug"})
    assert fast_backend.descriptor("other") is None  # the plugin does not provide it
    assert fast_backend.descriptor("gone") is None  # no such entry point
    assert fast_backend.descriptor("fastbe") is None  # not in the table
    with pytest.raises(BackendUnavailable):
        plugins.open_backend("other")  # discovery: no plugin provides 'other'
    assert plugins._manager is not None


def test_installing_a_distribution_forgets_the_table(site):
    entry_cache.store_backends("accy", {"fastbe": "fastplug"})
    info = site / "fake_more-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: fake-more\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[accy]\nmoreplug = fake_more_plugin\n")
    entries, backends = entry_cache.entry_points_and_backends("accy")
    assert "moreplug" in {ep.name for ep in entries} and backends == {}
