"""The installed entry points of a group, cached on disk so discovery skips importlib.metadata.

``importlib.metadata.entry_points()`` imports ~40 modules (email, zipfile, csv, pathlib's
glob machinery) and parses every installed distribution's metadata: 40–110 ms, most of a
warm-cache first call. :func:`entry_points` answers from ``<cache_dir>/plugins/
entry-points.json`` instead, when the file was written for the same *installation state*:
the ``sys.path`` entries that hold distributions, in order, and in each the names of the
``*.dist-info`` and ``*.egg-info`` distributions with the modification time of their
``entry_points.txt``. Installing, removing or reinstalling a distribution (``pip install``,
``pip install -e``, ``pip uninstall``) changes that state, so the table is rebuilt with
importlib.metadata on the next start. The file remembers the latest eight states, so
virtual environments that share a cache directory do not rebuild it in turn. Computing the
state costs one ``scandir`` per ``sys.path`` entry and one ``stat`` per distribution (about
a millisecond for a virtual environment of 100 packages); a later start takes it from the
memo stored in the file (:func:`_memo_state`: one ``stat`` per entry and distribution,
nothing listed, nothing raised) while every path entry, every ``entry_points.txt`` and the
directory of every distribution without one keeps its recorded modification time.

The file is read and written through :mod:`accy.runtime.cache_files` (private directory,
0600 file, written atomically); one that is unreadable, malformed or for another state is
ignored and rewritten. ``ACCY_DISABLE_DISK_CACHE`` bypasses it.
"""

from __future__ import annotations

import functools
import importlib
import json
import os
import sys
from typing import TYPE_CHECKING, Any

from accy.hashing import sha256

if TYPE_CHECKING:  # only cache_path() returns a Path: the warm path imports no pathlib
    from pathlib import Path

__all__ = ["CachedEntryPoint", "cache_path", "entry_points", "entry_points_and_backends",
           "installation_state", "last_entry_points", "store_backends"]

_FORMAT = 2
_KEEP_STATES = 8  # installations remembered in one table (virtual environments sharing it)
_LAST: dict[str, tuple[CachedEntryPoint, ...]] = {}  # group -> this process's last lookup
_DIST_SUFFIXES = (".dist-info", ".egg-info")


class _Dist:
    """The part of ``importlib.metadata.Distribution`` the plugin loader reads."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name


class CachedEntryPoint:
    """An entry point read from the cache; loads like ``importlib.metadata.EntryPoint``.

    Attributes:
        name, value, group: as in ``importlib.metadata.EntryPoint`` (``value`` is
            ``"module"`` or ``"module:attr.path"``).
        dist: an object whose ``name`` is the providing distribution's name.
    """

    __slots__ = ("dist", "group", "name", "value")

    def __init__(self, name: str, value: str, group: str, dist: str) -> None:
        self.name = name
        self.value = value
        self.group = group
        self.dist = _Dist(dist)

    def load(self) -> Any:
        """Import the module of ``value`` and return it or the attribute it names.

        Raises:
            ImportError, AttributeError: as ``importlib.metadata.EntryPoint.load`` does.
        """
        module_name, _, attrs = self.value.partition(":")
        module = importlib.import_module(module_name.strip())
        attrs = attrs.split("[", 1)[0].strip()  # "mod:attr [extra]": extras are not loaded
        return functools.reduce(getattr, filter(None, attrs.split(".")), module)

    def __repr__(self) -> str:
        return f"CachedEntryPoint(name={self.name!r}, value={self.value!r}, group={self.group!r})"


def installation_state() -> str:
    """A sha256 hex digest of what decides the installed entry points: the ``sys.path``
    entries that hold distributions, in order, with their distributions' names and
    ``entry_points.txt`` modification times (entries without any — a script's directory,
    the standard library — cannot provide entry points and are left out, so scripts run
    from different directories share one table)."""
    return _scan_state()[0]


def _scan_state() -> tuple[str, dict[str, Any]]:
    """:func:`installation_state`, with its memo: every ``sys.path`` entry's modification
    time (and absolute path), and the path and modification time of each distribution's
    ``entry_points.txt`` or, where it has none, of its directory (creating the file
    changes that)."""
    h = sha256(f"{_FORMAT}|{sys.version}|{sys.prefix}\n".encode())
    rows: list[list[Any]] = []
    for entry in sys.path:
        where = os.path.abspath(entry or ".")
        try:
            mtime = os.stat(entry or ".").st_mtime_ns  # before the listing: a later change
            with os.scandir(entry or ".") as it:  # shows as another time
                names = [e.name for e in it if e.name.endswith(_DIST_SUFFIXES)]
        except OSError:  # absent, a file or a zip archive: its own mtime stands for it
            try:
                mtime = os.stat(entry).st_mtime_ns
                h.update(f"\0{entry}|{mtime}\n".encode(errors="surrogateescape"))
            except OSError:
                mtime = None
            rows.append([entry, where, mtime, None])
            continue
        dists: list[list[Any]] = []
        rows.append([entry, where, mtime, dists])
        if not names:
            continue
        h.update(f"\0{entry}\n".encode(errors="surrogateescape"))
        for name in sorted(names):
            dist = os.path.join(entry, name)
            try:
                dist_mtime = os.stat(dist).st_mtime_ns
            except OSError:
                dist_mtime = None
            try:
                ep_mtime = os.stat(os.path.join(dist, "entry_points.txt")).st_mtime_ns
            except OSError:  # no entry points, or a single-file .egg-info
                ep_mtime = -1
            h.update(f"{name}:{ep_mtime}\n".encode(errors="surrogateescape"))
            # what tells a change: the file, or where it has none its directory (creating
            # entry_points.txt changes the directory's mtime)
            dists.append([os.path.join(dist, "entry_points.txt"), ep_mtime] if ep_mtime != -1
                         else [dist, dist_mtime])
    digest = h.hexdigest()
    return digest, {"key": _memo_key(), "digest": digest, "entries": rows}


def _memo_key() -> str:
    return f"{_FORMAT}|{sys.version}|{sys.prefix}|{sys.path!r}"


def _memo_state(memo: Any) -> str | None:
    """The installation state a memo (:func:`_scan_state`) recorded, when every path entry
    and distribution it names is unchanged (one ``stat`` each, no listing), else ``None``."""
    if type(memo) is not dict or memo.get("key") != _memo_key():
        return None
    digest, rows = memo.get("digest"), memo.get("entries")
    if type(digest) is not str or type(rows) is not list or len(rows) != len(sys.path):
        return None
    try:
        for row, now in zip(rows, sys.path, strict=True):
            if row[0] != now or not _entry_current(*row):
                return None
    except (OSError, TypeError, ValueError):
        return None
    return digest


def _entry_current(entry: str, where: str, mtime: Any, dists: Any) -> bool:
    """Whether the ``sys.path`` entry a memo row describes is as it was then."""
    if where != os.path.abspath(entry or "."):
        return False
    if dists is None:  # not a directory then: absent, a file or a zip archive
        try:
            st = os.stat(entry)
        except OSError:
            return mtime is None
        return st.st_mtime_ns == mtime and not os.path.isdir(entry)
    stat = os.stat
    if stat(entry or ".").st_mtime_ns != mtime:  # a distribution added or removed?
        if dists:
            return False
        # an entry that held none (a script's directory: written to often) still holds
        # none: its listing, not the whole state's, decides
        with os.scandir(entry or ".") as it:
            return not any(e.name.endswith(_DIST_SUFFIXES) for e in it)
    for path, path_mtime in dists:  # an entry_points.txt, or a directory without one
        if stat(path).st_mtime_ns != path_mtime:
            return False
    return True


def _with_memo(memos: dict[str, Any], memo: dict[str, Any]) -> dict[str, Any]:
    """``memos`` (memo key -> memo) with ``memo`` last, the latest eight kept: processes of
    other ``sys.path`` (scripts in other directories, pytest) do not rewrite it in turn."""
    out = {k: v for k, v in memos.items() if k != memo["key"]}
    out[memo["key"]] = memo
    return dict(list(out.items())[-_KEEP_STATES:])


def _storable(memo: dict[str, Any]) -> bool:
    """Whether nothing the memo records was modified in the last two seconds (a change
    within the same clock tick could not be told apart); a directory that held no
    distribution (a script's, often written to) is then recorded as one to list."""
    import time

    recent = time.time_ns() - 2_000_000_000
    for row in memo["entries"]:
        mtime, dists = row[2], row[3]
        if mtime is not None and mtime > recent:
            if dists != []:
                return False
            row[2] = -1  # never matches: :func:`_entry_current` lists it
        for _, path_mtime in dists or ():
            if path_mtime is None or path_mtime > recent:
                return False
    return True


def cache_path() -> Path:
    """Return the cache file, ``accy.config.cache_dir()/plugins/entry-points.json``."""
    from pathlib import Path

    return Path(_cache_file())


def _cache_file() -> str:
    from accy import config

    return os.path.join(config.cache_dir_str(), "plugins", "entry-points.json")


def _scan(group: str) -> list[CachedEntryPoint]:
    import importlib.metadata

    return [CachedEntryPoint(ep.name, ep.value, ep.group,
                             ep.dist.name if getattr(ep, "dist", None) is not None else "unknown")
            for ep in importlib.metadata.entry_points(group=group)]


def _read(path: str, root: str) -> dict[str, Any] | None:
    from accy.runtime import cache_files

    if cache_files.chain_problem(os.path.dirname(path), root) is not None:
        return None
    try:
        table = json.loads(cache_files.read_cache_file(path))
    except (OSError, ValueError):
        return None
    return table if isinstance(table, dict) else None


def _write(path: str, root: str, table: dict[str, Any]) -> None:
    from accy.runtime import cache_files

    try:
        cache_files.ensure_directory_str(os.path.dirname(path))
        if cache_files.chain_problem(os.path.dirname(path), root) is None:
            cache_files.write_cache_file(path, json.dumps(table, sort_keys=True).encode())
    except OSError:  # an unwritable cache only costs the next start a scan
        pass


def entry_points(group: str) -> list[CachedEntryPoint]:
    """Return the installed entry points of ``group``, in importlib.metadata's order.

    From the cache file when it was written for the present :func:`installation_state`,
    else from ``importlib.metadata.entry_points(group=group)`` (and the file is updated).
    """
    return entry_points_and_backends(group)[0]


def entry_points_and_backends(group: str) -> tuple[list[CachedEntryPoint], dict[str, str]]:
    """:func:`entry_points`, with the backend table that :func:`store_backends` recorded
    for the same installation state (backend name -> the entry point's name that provides
    it; empty when none was recorded), from one read of the cache file."""
    found, backends = _lookup(group)
    _LAST[group] = tuple(found)
    return found, backends


def last_entry_points(group: str) -> tuple[CachedEntryPoint, ...] | None:
    """The entry points of ``group`` that this process's last :func:`entry_points` (or
    :func:`entry_points_and_backends`) returned; ``None`` before the first lookup. For keys
    that name the installed plugins without a second lookup (~1.4 ms of ``stat`` calls)."""
    return _LAST.get(group)


def _lookup(group: str) -> tuple[list[CachedEntryPoint], dict[str, str]]:
    from accy import config

    if config.disk_cache_disabled():
        return _scan(group), {}
    root = config.cache_dir_str()
    path = _cache_file()
    table = _read(path, root) or {}
    ours = table.get("format") == _FORMAT
    memos = table.get("memos") if ours else None
    memos = memos if isinstance(memos, dict) else {}
    state = _memo_state(memos.get(_memo_key()))
    memo = None  # a fresh memo to store, when the table's did not answer
    if state is None:
        state, memo = _scan_state()
    states = table.get("states") if ours else None
    states = states if isinstance(states, dict) else {}
    groups = states.get(state)
    rows = groups.get(group) if isinstance(groups, dict) else None
    if isinstance(rows, list):
        try:
            found = [CachedEntryPoint(str(n), str(v), group, str(d)) for n, v, d in rows]
        except (TypeError, ValueError):
            pass  # malformed: rescan below
        else:
            backends = groups.get(_backends_key(group))
            if not isinstance(backends, dict) or not all(
                    isinstance(k, str) and isinstance(v, str) for k, v in backends.items()):
                backends = {}
            if memo is not None and _storable(memo):  # the next start skips the listing
                _write(path, root, {**table, "memos": _with_memo(memos, memo)})
            return found, backends
    found = _scan(group)
    groups = dict(groups) if isinstance(groups, dict) else {}
    groups.pop(_backends_key(group), None)  # recorded from the rows being replaced
    groups[group] = [[ep.name, ep.value, ep.dist.name] for ep in found]
    # several installations (virtual environments) may share one cache directory: keep the
    # latest few, this one last
    states.pop(state, None)
    states[state] = groups
    kept = dict(list(states.items())[-_KEEP_STATES:])
    out: dict[str, Any] = {"format": _FORMAT, "states": kept}
    if memo is not None and _storable(memo):
        out["memos"] = _with_memo(memos, memo)
    elif memos:
        out["memos"] = memos
    _write(path, root, out)
    return found, {}


def _backends_key(group: str) -> str:
    return f"{group}:backends"


def store_backends(group: str, providers: dict[str, str]) -> None:
    """Record which entry point of ``group`` provides each backend (name -> entry-point
    name), as a full discovery of the installed plugins found them, for the present
    installation state; a no-op when the cache is disabled or has no table for this state
    (the next :func:`entry_points` writes one). Installing or removing a distribution
    changes the state, so a recorded table never outlives the plugins it describes."""
    from accy import config

    if config.disk_cache_disabled():
        return
    root = config.cache_dir_str()
    path = _cache_file()
    state = installation_state()
    table = _read(path, root) or {}
    states = table.get("states") if table.get("format") == _FORMAT else None
    groups = states.get(state) if isinstance(states, dict) else None
    if not isinstance(groups, dict) or not isinstance(groups.get(group), list):
        return
    if groups.get(_backends_key(group)) == providers:
        return
    groups[_backends_key(group)] = dict(providers)
    _write(path, root, table)
