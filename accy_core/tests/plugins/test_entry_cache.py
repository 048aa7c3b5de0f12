"""The cached entry-point table: served without importlib.metadata while the installation
is unchanged, rebuilt when a distribution is installed, removed or reinstalled."""

from __future__ import annotations

import os
import sys
import textwrap

import pytest
from accy.plugins import entry_cache


@pytest.fixture
def site(tmp_path, monkeypatch):
    """A private cache and one extra sys.path directory to install fake plugins into."""
    monkeypatch.setenv("ACCY_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("ACCY_DISABLE_DISK_CACHE", raising=False)
    directory = tmp_path / "site"
    directory.mkdir()
    monkeypatch.syspath_prepend(str(directory))
    return directory


def _install(site, dist: str, entry: str, value: str, module: str | None = None) -> None:
    info = site / f"{dist.replace('-', '_')}-0.1.dist-info"
    info.mkdir(exist_ok=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(f"[accy]\n{entry} = {value}\n")
    if module is not None:
        (site / f"{value.split(':')[0]}.py").write_text(textwrap.dedent(module))


def _names(eps) -> dict[str, str]:
    return {ep.name: ep.dist.name for ep in eps}


def test_second_lookup_skips_the_scan_and_install_remove_invalidate(site, monkeypatch):
    _install(site, "fake-one", "one", "fake_one_mod:PLUGIN", "PLUGIN = 'loaded'\n")
    first = entry_cache.entry_points("accy")
    assert _names(first)["one"] == "fake-one"
    assert entry_cache.cache_path().is_file()

    def no_scan(group):
        raise AssertionError("scanned although nothing changed")

    with monkeypatch.context() as m:
        m.setattr(entry_cache, "_scan", no_scan)
        cached = entry_cache.entry_points("accy")
    assert [(e.name, e.value, e.dist.name) for e in cached] == [
        (e.name, e.value, e.dist.name) for e in first]
    (one,) = [e for e in cached if e.name == "one"]
    assert isinstance(one, entry_cache.CachedEntryPoint) and one.load() == "loaded"

    _install(site, "fake-two", "two", "fake_two_mod")  # install: rescanned
    assert {"one", "two"} <= set(_names(entry_cache.entry_points("accy")))
    for f in (site / "fake_one-0.1.dist-info").iterdir():  # uninstall: rescanned
        f.unlink()
    (site / "fake_one-0.1.dist-info").rmdir()
    names = _names(entry_cache.entry_points("accy"))
    assert "one" not in names and "two" in names


def test_reinstall_with_other_entry_points_rescans(site):
    _install(site, "fake-re", "old", "fake_re_mod")
    assert "old" in _names(entry_cache.entry_points("accy"))
    info = site / "fake_re-0.1.dist-info" / "entry_points.txt"
    info.write_text("[accy]\nnew = fake_re_mod\n")
    st = info.stat()
    os.utime(info, ns=(st.st_atime_ns, st.st_mtime_ns + 10_000_000))  # as a reinstall does
    names = _names(entry_cache.entry_points("accy"))
    assert "new" in names and "old" not in names


@pytest.mark.parametrize("content", [b"", b"{not json", b'{"state": 1, "groups": 3}', b"[]"])
def test_a_malformed_table_is_rebuilt(site, content):
    _install(site, "fake-bad", "bad", "fake_bad_mod")
    entry_cache.entry_points("accy")
    entry_cache.cache_path().write_bytes(content)
    assert "bad" in _names(entry_cache.entry_points("accy"))
    assert b"fake_bad_mod" in entry_cache.cache_path().read_bytes()


def test_disabled_disk_cache_scans_and_writes_nothing(site, monkeypatch):
    monkeypatch.setenv("ACCY_DISABLE_DISK_CACHE", "1")
    _install(site, "fake-off", "off", "fake_off_mod")
    assert "off" in _names(entry_cache.entry_points("accy"))
    assert not entry_cache.cache_path().exists()


def test_plugin_manager_loads_cached_entry_points(site):
    from accy.plugins import PluginManager

    _install(site, "fake-be", "fakebe", "fake_be_mod", """
        from accy.backend import API_VERSION, BackendDescriptor, ProbeResult, RecordingBackend
        from accy.plugins import hookimpl

        @hookimpl
        def accy_backends():
            return [BackendDescriptor("fakebe", API_VERSION, lambda: ProbeResult(True),
                                      lambda: RecordingBackend("fakebe"))]
    """)
    entry_cache.entry_points("accy")  # fill the table
    sys.modules.pop("fake_be_mod", None)
    manager = PluginManager()
    assert "fakebe" in manager.backends()
    assert manager.distributions["fakebe"] == "fake-be"


def test_installations_sharing_the_table_do_not_rescan_in_turn(site, tmp_path, monkeypatch):
    _install(site, "fake-a", "a", "fake_a_mod")
    state = entry_cache.installation_state()
    scripts = tmp_path / "scripts"  # a script's directory (sys.path[0]) holds no distribution
    scripts.mkdir()
    monkeypatch.syspath_prepend(str(scripts))
    assert entry_cache.installation_state() == state
    entry_cache.entry_points("accy")
    other = tmp_path / "other"  # another environment's site-packages
    other.mkdir()
    _install(other, "fake-b", "b", "fake_b_mod")
    with monkeypatch.context() as m:
        m.syspath_prepend(str(other))
        assert "b" in _names(entry_cache.entry_points("accy"))

    def no_scan(group):
        raise AssertionError("rescanned an installation the table remembers")

    monkeypatch.setattr(entry_cache, "_scan", no_scan)
    names = _names(entry_cache.entry_points("accy"))
    assert "a" in names and "b" not in names


OLD = 1_600_000_000_000_000_000  # ns: older than the memo's racy window


def _age(site) -> None:
    for d, _, files in os.walk(site):
        for f in files:
            os.utime(os.path.join(d, f), ns=(OLD, OLD))
        os.utime(d, ns=(OLD, OLD))


@pytest.mark.parametrize("change", ["install", "edit", "new-entry-points", "none"])
def test_the_state_memo_lists_nothing_and_still_sees_every_change(site, monkeypatch,
                                                                  change):
    _install(site, "fake-m", "m", "fake_m_mod")
    info = site / "fake_m-0.1.dist-info"
    plain = site / "fake_plain-0.1.dist-info"  # a distribution without entry points
    plain.mkdir()
    (plain / "METADATA").write_text("Metadata-Version: 2.1\nName: fake-plain\nVersion: 0.1\n")
    _age(site)
    monkeypatch.setattr(sys, "path", [str(site)])  # (the test plugins' directory is young)
    assert "m" in _names(entry_cache.entry_points("accy"))  # scanned; the memo stored
    table = entry_cache._read(entry_cache._cache_file(), os.environ["ACCY_CACHE_DIR"])
    memo = table["memos"][entry_cache._memo_key()]
    assert entry_cache._memo_state(memo) == entry_cache.installation_state()
    if change == "install":
        _install(site, "fake-n", "n", "fake_n_mod")
    elif change == "edit":  # in place, as a reinstall over the same directory could
        (info / "entry_points.txt").write_text("[accy]\nm2 = fake_m_mod\n")
        os.utime(info / "entry_points.txt", ns=(OLD + 10**9, OLD + 10**9))
        os.utime(info, ns=(OLD, OLD))
    elif change == "new-entry-points":
        (plain / "entry_points.txt").write_text("[accy]\np = fake_p_mod\n")
    else:
        def no_listing(path):
            raise AssertionError("listed although nothing changed")

        monkeypatch.setattr(entry_cache.os, "scandir", no_listing)
    names = _names(entry_cache.entry_points("accy"))
    want = {"install": {"m", "n"}, "edit": {"m2"}, "new-entry-points": {"m", "p"},
            "none": {"m"}}[change]
    assert want <= set(names) and (change != "edit" or "m" not in names)


def test_a_busy_script_directory_keeps_the_memo_and_a_new_distribution_there_is_seen(
        site, tmp_path, monkeypatch):
    _install(site, "fake-s", "s", "fake_s_mod")
    script_dir = tmp_path / "scripts"  # written to just now: within the racy window
    script_dir.mkdir()
    _age(site)
    monkeypatch.setattr(sys, "path", [str(script_dir), str(site)])
    entry_cache.entry_points("accy")
    table = entry_cache._read(entry_cache._cache_file(), os.environ["ACCY_CACHE_DIR"])
    memo = table["memos"][entry_cache._memo_key()]
    assert memo["entries"][0][2] == -1  # stored, that directory to be listed
    (script_dir / "out.txt").write_text("a script's output")
    assert entry_cache._memo_state(memo) == entry_cache.installation_state()
    _install(script_dir, "fake-t", "t", "fake_t_mod")
    assert entry_cache._memo_state(memo) is None
    assert {"s", "t"} <= set(_names(entry_cache.entry_points("accy")))


def test_processes_of_two_sys_paths_keep_one_memo_each(site, tmp_path, monkeypatch):
    _install(site, "fake-u", "u", "fake_u_mod")
    other = tmp_path / "other"
    other.mkdir()
    _age(site)
    _age(other)
    for path in ([str(site)], [str(other), str(site)], [str(site)]):
        monkeypatch.setattr(sys, "path", path)
        entry_cache.entry_points("accy")
    table = entry_cache._read(entry_cache._cache_file(), os.environ["ACCY_CACHE_DIR"])
    assert len(table["memos"]) == 2

    def no_listing(path):
        raise AssertionError("listed although nothing changed")

    monkeypatch.setattr(entry_cache.os, "scandir", no_listing)
    for path in ([str(other), str(site)], [str(site)]):
        monkeypatch.setattr(sys, "path", path)
        assert "u" in _names(entry_cache.entry_points("accy"))
