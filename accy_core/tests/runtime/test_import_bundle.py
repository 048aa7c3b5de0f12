"""The import bundle: a warm call's submodules come from one cache file, are the same modules
as imported the usual way, and anything edited, added beside them or corrupt is imported the
usual way (nothing in the file is trusted unchecked)."""

from __future__ import annotations

import os
import sys

import pytest
from accy.runtime import import_bundle

OLD = 1_600_000_000_000_000_000  # ns: older than the racy window


@pytest.fixture
def pkg(tmp_path, monkeypatch):
    """A package ``bpkg`` with submodules ``mod`` and ``sub`` (a package), aged past the
    racy window, on ``sys.path``; the cache in ``tmp_path/cache``."""
    monkeypatch.setenv("ACCY_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("ACCY_DISABLE_DISK_CACHE", raising=False)
    root = tmp_path / "src"
    (root / "bpkg" / "sub").mkdir(parents=True)
    (root / "bpkg" / "__init__.py").write_text("")
    (root / "bpkg" / "mod.py").write_text('"""doc"""\nVALUE = 41 + 1\n')
    (root / "bpkg" / "sub" / "__init__.py").write_text("from bpkg.sub import leaf\n")
    (root / "bpkg" / "sub" / "leaf.py").write_text("LEAF = 'leaf'\n")
    for d, _, files in os.walk(root):
        for f in files:
            os.utime(os.path.join(d, f), ns=(OLD, OLD))
    for d, _, _ in os.walk(root):
        os.utime(d, ns=(OLD, OLD))
    monkeypatch.syspath_prepend(str(root))
    import_bundle.forget()
    yield root
    import_bundle.forget()
    for name in [n for n in sys.modules if n == "bpkg" or n.startswith("bpkg.")]:
        del sys.modules[name]


def _forget() -> None:
    """As a new process: the package's submodules not imported, no bundle read."""
    import_bundle.forget()
    for name in [n for n in sys.modules if n.startswith("bpkg.")]:
        del sys.modules[name]


def _window(hit: bool = True) -> None:
    with import_bundle.serving() as window:
        import bpkg.mod
        import bpkg.sub  # noqa: F401
        if hit:
            window.hit()


def _served(name: str) -> bool:
    return type(sys.modules[name].__spec__.loader).__name__ == "_BundledLoader"


def test_a_second_window_serves_the_same_modules_from_the_bundle(pkg):
    import bpkg  # the top-level package: always the usual way

    _window()
    path = import_bundle.bundle_path()
    assert os.path.isfile(path)
    _forget()
    _window()
    for name in ("bpkg.mod", "bpkg.sub", "bpkg.sub.leaf"):
        assert _served(name), name
    mod = sys.modules["bpkg.mod"]
    assert mod.VALUE == 42 and mod.__doc__ == "doc"
    assert mod.__file__ == str(pkg / "bpkg" / "mod.py")
    assert sys.modules["bpkg.sub"].__path__ == [str(pkg / "bpkg" / "sub")]
    assert sys.modules["bpkg.sub"].leaf.LEAF == "leaf"
    assert not _served("bpkg")
    assert import_bundle._Finder not in {type(f) for f in sys.meta_path}
    assert bpkg.mod is mod


def test_a_window_with_nothing_to_import_reads_nothing(pkg, monkeypatch):
    _window()
    _forget()
    import bpkg.mod
    import bpkg.sub  # noqa: F401

    def no_read(path):
        raise AssertionError("read although nothing was imported")

    monkeypatch.setattr(import_bundle, "_read", no_read)
    _window()


def test_no_bundle_without_a_hit_and_none_when_the_cache_is_off(pkg, monkeypatch):
    _window(hit=False)
    assert not os.path.exists(import_bundle.bundle_path())
    _forget()
    monkeypatch.setenv("ACCY_DISABLE_DISK_CACHE", "1")
    assert import_bundle.bundle_path() is None
    _window()
    assert not _served("bpkg.mod")


def test_an_edited_module_or_a_changed_directory_is_imported_the_usual_way(pkg):
    _window()
    _forget()
    mod = pkg / "bpkg" / "mod.py"
    mod.write_text("VALUE = 7\n")  # an edit in place (same directory entries)
    os.utime(mod, ns=(OLD + 10**9, OLD + 10**9))
    os.utime(mod.parent, ns=(OLD, OLD))
    _window()
    assert not _served("bpkg.mod") and sys.modules["bpkg.mod"].VALUE == 7
    assert _served("bpkg.sub.leaf")
    _forget()
    (pkg / "bpkg" / "sub" / "new.py").write_text("")  # the directory changed
    _window()
    assert not _served("bpkg.sub.leaf") and sys.modules["bpkg.sub.leaf"].LEAF == "leaf"


@pytest.mark.parametrize("damage", ["flip", "truncate", "garbage"])
def test_a_corrupt_bundle_is_ignored_and_rewritten(pkg, damage):
    _window()
    path = import_bundle.bundle_path()
    data = bytearray(open(path, "rb").read())
    if damage == "flip":
        data[len(data) // 2] ^= 0x40
    elif damage == "truncate":
        del data[len(data) // 3:]
    else:
        data[:] = b"not a bundle"
    with open(path, "wb") as f:
        f.write(data)
    _forget()
    _window()
    assert not _served("bpkg.mod") and sys.modules["bpkg.mod"].VALUE == 42
    _forget()
    _window()
    assert _served("bpkg.mod")  # the window that hit wrote a good one


def test_a_bundle_of_another_sys_path_is_not_read(pkg, monkeypatch):
    _window()
    path = import_bundle.bundle_path()
    monkeypatch.syspath_prepend(str(pkg / "elsewhere"))
    assert import_bundle.bundle_path() != path
    _forget()
    _window()
    assert not _served("bpkg.mod")
