"""The memo of a source tree's fingerprint: a new process stats the files it lists instead of
walking and hashing the tree, and still sees every edit, added, removed or renamed file, and
never trusts a memo that does not check."""

from __future__ import annotations

import os

import pytest
from accy.runtime import pipeline_cache

OLD = 1_600_000_000_000_000_000  # ns: older than the racy window


@pytest.fixture
def tree(tmp_path, monkeypatch):
    """A package tree aged past the racy window; the cache in ``tmp_path/cache``."""
    monkeypatch.setenv("ACCY_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("ACCY_DISABLE_DISK_CACHE", raising=False)
    root = tmp_path / "src" / "spkg"
    (root / "sub").mkdir(parents=True)
    (root / "__init__.py").write_text("")
    (root / "a.py").write_text("A = 1\n")
    (root / "sub" / "b.py").write_text("B = 2\n")
    (root / "data.txt").write_text("not a source")
    _age(root)
    pipeline_cache._tree_fingerprint.cache_clear()
    yield root
    pipeline_cache._tree_fingerprint.cache_clear()


def _age(root) -> None:
    for d, _, files in os.walk(root):
        for f in files:
            os.utime(os.path.join(d, f), ns=(OLD, OLD))
        os.utime(d, ns=(OLD, OLD))


def _fresh(root) -> str:
    """The fingerprint as a new process computes it."""
    pipeline_cache._tree_fingerprint.cache_clear()
    return pipeline_cache._tree_fingerprint(str(root))


def _walked(root) -> str:
    return pipeline_cache._walk_fingerprint(str(root), [], [])


def test_a_new_process_takes_the_memo_without_walking(tree, monkeypatch):
    first = _fresh(tree)
    assert first == _walked(tree)
    assert os.path.isfile(pipeline_cache._memo_path(str(tree)))

    def no_walk(*args):
        raise AssertionError("walked although nothing changed")

    monkeypatch.setattr(pipeline_cache, "_walk_fingerprint", no_walk)
    assert _fresh(tree) == first


@pytest.mark.parametrize("change", ["edit", "add", "remove", "rename", "subdir"])
def test_every_change_to_the_sources_is_seen(tree, change):
    first = _fresh(tree)
    if change == "edit":  # in place: same size, same directory entries
        (tree / "a.py").write_text("A = 2\n")
        os.utime(tree / "a.py", ns=(OLD + 10**9, OLD + 10**9))
        os.utime(tree, ns=(OLD, OLD))
    elif change == "add":
        (tree / "sub" / "c.py").write_text("")
    elif change == "remove":
        (tree / "sub" / "b.py").unlink()
    elif change == "rename":
        (tree / "a.py").rename(tree / "z.py")
    else:
        (tree / "sub" / "deeper").mkdir()
        (tree / "sub" / "deeper" / "d.py").write_text("")
    now = _fresh(tree)
    assert now != first and now == _walked(tree)


@pytest.mark.parametrize("damage", ["flip", "truncate", "garbage"])
def test_a_corrupt_memo_is_not_trusted(tree, damage):
    first = _fresh(tree)
    path = pipeline_cache._memo_path(str(tree))
    data = bytearray(open(path, "rb").read())
    if damage == "flip":
        data[len(data) // 2] ^= 0x01
    elif damage == "truncate":
        del data[len(data) // 2:]
    else:
        data[:] = b"ACCYSRC1garbage"
    with open(path, "wb") as f:
        f.write(data)
    assert pipeline_cache._memo_digest(path, str(tree)) is None
    assert _fresh(tree) == first  # walked, and the memo rewritten
    assert pipeline_cache._memo_digest(path, str(tree)) == first


def test_no_memo_of_young_files_or_without_the_disk_cache(tree, monkeypatch):
    (tree / "a.py").write_text("A = 3\n")  # modified just now: within the racy window
    _fresh(tree)
    assert not os.path.exists(pipeline_cache._memo_path(str(tree)))
    monkeypatch.setenv("ACCY_DISABLE_DISK_CACHE", "1")
    assert pipeline_cache._memo_path(str(tree)) is None
    assert _fresh(tree) == _walked(tree)
