"""The warm path's modules in one cache file: a known program's first call without the
import system's per-module file work.

A warm-cache first call (:mod:`accy.frontend.jit_index`) imports ~35 of accy's modules
(the caches, the plugin loader, the backend, the executable). For each, the import system
searches the package directory, checks the source, opens and reads its ``.pyc`` and
unmarshals it: about half of a warm first call on the 2-core machine. :func:`serving`
installs, for the duration of such a call, a finder in front of ``sys.meta_path`` that
answers from one file, ``<cache_dir>/imports/<key>.bin``, holding the byte code of every
module an earlier warm call imported there (with its source file's identity), so each of
them costs one ``stat`` and its unmarshalling; their modules are otherwise the same as
imported the usual way (a :class:`~importlib.machinery.SourceFileLoader` for the same
file: ``__file__``, ``__spec__``, ``inspect.getsource``, resources and reloads as usual).

What makes it safe to use:

- the file is for one interpreter and ``sys.path``: its name and its first field are a
  digest of the Python version and build, the byte-code cache tag, the optimisation level
  and ``sys.path``;
- a module is served only as a submodule (top-level modules are found the usual way), only
  when its package's ``__path__`` holds its directory, its source file has the size,
  modification time and inode recorded with its byte code, and its directory the
  modification time recorded then (so a module or package added beside it, which the
  import system could prefer, is found the usual way); otherwise the usual search runs;
- sources and directories modified less than two seconds before the file was written are
  not recorded (a later change within the same clock tick could not be told apart);
- the file goes through :mod:`accy.runtime.cache_files` (private directory, 0600, atomic
  writes) and carries a CRC-32 of its contents; one that does not check or decode is
  ignored (and rewritten by the next warm call that hits).

The file is (re)written at the end of a window in which the jit index found the program
and a module was imported the usual way (the first warm process after a compile, or after
a source edit), from the code objects the import system itself would run (the loader's
``get_code``). ``ACCY_DISABLE_DISK_CACHE`` turns it off with the other disk caches.
"""

from __future__ import annotations

import marshal
import os
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from importlib.machinery import ModuleSpec, SourceFileLoader
from typing import Any

__all__ = ["FORMAT", "Window", "bundle_path", "forget", "serving"]

FORMAT = 1
_MAGIC = b"ACCYIMP1"
_RACY_NS = 2_000_000_000  # sources younger than this when written are not recorded
_MAX_MODULES = 256
_LOCK = threading.Lock()  # one window at a time (a second concurrent one serves nothing)

# name -> (origin, is_package, (mtime_ns, size, ino), code bytes)
Entry = tuple[str, bool, tuple[int, int, int], bytes]


class _BundledLoader(SourceFileLoader):
    """A source loader whose first ``get_code`` answers from the bundle's byte code."""

    def __init__(self, fullname: str, path: str, code: bytes) -> None:
        super().__init__(fullname, path)
        self._bundled: bytes | None = code

    def get_code(self, fullname: str) -> Any:
        code, self._bundled = self._bundled, None
        if code is not None and fullname == self.name:
            try:
                return marshal.loads(code)
            except (EOFError, ValueError, TypeError):
                pass  # (checksummed: only a bug gets here) the usual way
        return super().get_code(fullname)


def _identity(st: os.stat_result) -> tuple[int, int, int]:
    return (st.st_mtime_ns, st.st_size, st.st_ino)


class _Bundle:
    """What this process read of one bundle file: the entries not served yet, those served
    (by any window) and the directories' modification times; read on first need."""

    __slots__ = ("dirs", "modules", "path", "read", "served")

    def __init__(self, path: str) -> None:
        self.path = path
        self.read = False
        self.modules: dict[str, Entry] = {}
        self.served: dict[str, Entry] = {}
        self.dirs: dict[str, int] = {}

    def load(self) -> None:
        if not self.read:
            self.read = True
            got = _read(self.path)
            if got is not None:
                self.modules, self.dirs = got


_BUNDLES: dict[str, _Bundle] = {}  # bundle path -> this process's view of it


def forget() -> None:
    """Forget the bundles this process read (tests: the next window reads as a new process
    would)."""
    with _LOCK:
        _BUNDLES.clear()


class _Finder:
    """The ``sys.meta_path`` finder of one window (see the module docstring): reads the
    bundle at the first submodule import (a window whose modules are all imported already
    reads nothing)."""

    def __init__(self, bundle: _Bundle) -> None:
        self.bundle = bundle
        self._dir_ok: dict[str, bool] = {}

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> ModuleSpec | None:
        if path is None:
            return None
        bundle = self.bundle
        bundle.load()
        entry = bundle.modules.get(name)
        if entry is None:
            return None
        origin, package, ident, code = entry
        where = os.path.dirname(origin)
        parent = os.path.dirname(where) if package else where
        try:
            if parent not in path or not self._dir_current(where) or (
                    package and not self._dir_current(parent)):
                return None
            if _identity(os.stat(origin)) != ident:
                return None
        except (OSError, TypeError):
            return None
        del bundle.modules[name]
        bundle.served[name] = entry
        spec = ModuleSpec(name, _BundledLoader(name, origin, code), origin=origin,
                          is_package=package)
        spec.has_location = True
        if package:
            spec.submodule_search_locations = [where]
        return spec

    def _dir_current(self, directory: str) -> bool:
        ok = self._dir_ok.get(directory)
        if ok is None:
            try:
                ok = os.stat(directory).st_mtime_ns == self.bundle.dirs.get(directory)
            except OSError:
                ok = False
            self._dir_ok[directory] = ok
        return ok


def _key() -> str:
    return "|".join([str(FORMAT), sys.version, str(sys.implementation.cache_tag),
                     str(sys.flags.optimize), repr(sys.path)])


def bundle_path() -> str | None:
    """The bundle file of this interpreter and ``sys.path``, or ``None`` when the disk cache
    is disabled."""
    from accy import config

    if config.disk_cache_disabled():
        return None
    from accy.hashing import sha256

    name = sha256(_key().encode("utf-8", "surrogateescape")).hexdigest()[:24]
    return os.path.join(config.cache_dir_str(), "imports", f"{name}.bin")


def _read(path: str) -> tuple[dict[str, Entry], dict[str, int]] | None:
    """The modules and directories of the bundle at ``path``, or ``None`` (absent, refused,
    not checking or not decoding)."""
    import binascii

    from accy import config
    from accy.runtime import cache_files

    if cache_files.chain_problem(os.path.dirname(path), config.cache_dir_str()) is not None:
        return None
    try:
        data = cache_files.read_cache_file(path)
    except OSError:
        return None
    head = len(_MAGIC) + 4
    if data[:len(_MAGIC)] != _MAGIC or int.from_bytes(data[len(_MAGIC):head], "little") \
            != binascii.crc32(memoryview(data)[head:]):
        return None
    try:
        key, modules, dirs = marshal.loads(memoryview(data)[head:])
        if key != _key() or type(modules) is not dict or type(dirs) is not dict:
            return None
        for name, (origin, package, ident, code) in modules.items():
            if not (type(name) is type(origin) is str and type(package) is bool
                    and type(code) is bytes and len(ident) == 3
                    and all(type(v) is int for v in ident)):
                return None
        if not all(type(d) is str and type(m) is int for d, m in dirs.items()):
            return None
    except (EOFError, ValueError, TypeError):
        return None
    return modules, dirs


def _record(name: str, module: Any, now: int) -> tuple[Entry, dict[str, int]] | None:
    """The bundle entry of imported submodule ``name`` with the modification times of the
    directories it is checked against, or ``None`` when it is not a plain source module or
    it or a directory is too young."""
    spec = getattr(module, "__spec__", None)
    loader = getattr(spec, "loader", None)
    origin = getattr(spec, "origin", None)
    if type(loader) not in (SourceFileLoader, _BundledLoader) or "." not in name or \
            not isinstance(origin, str) or not origin.endswith(".py"):
        return None
    package = spec.submodule_search_locations is not None
    where = os.path.dirname(origin)
    checked = [where, os.path.dirname(where)] if package else [where]
    try:
        before = os.stat(origin)
        code = loader.get_code(name)
        after = os.stat(origin)
        dirs = {d: os.stat(d).st_mtime_ns for d in checked}
    except (OSError, ImportError, SyntaxError, ValueError):
        return None
    if code is None or _identity(before) != _identity(after) or \
            now - after.st_mtime_ns < _RACY_NS or any(now - m < _RACY_NS for m in dirs.values()):
        return None
    return (origin, package, _identity(after), marshal.dumps(code)), dirs


def _write(path: str, modules: dict[str, Entry], dirs: dict[str, int]) -> None:
    import binascii

    from accy import config
    from accy.runtime import cache_files

    payload = marshal.dumps((_key(), modules, dirs))
    data = _MAGIC + binascii.crc32(payload).to_bytes(4, "little") + payload
    try:
        cache_files.ensure_directory_str(os.path.dirname(path))
        if cache_files.chain_problem(os.path.dirname(path), config.cache_dir_str()) is None:
            cache_files.write_cache_file(path, data)
    except OSError:  # an optimisation: the next warm call imports the usual way
        pass


class Window:
    """What :func:`serving` yields: call :meth:`hit` when the warm path found its program
    (only then is the bundle rewritten)."""

    __slots__ = ("found",)

    def __init__(self) -> None:
        self.found = False

    def hit(self) -> None:
        """Mark the window's warm path as a hit of the jit index."""
        self.found = True


@contextmanager
def serving() -> Iterator[Window]:
    """Serve the bundle's modules to imports inside the block (see the module docstring);
    on the way out, rewrite the bundle when :meth:`Window.hit` was called and a submodule
    was imported the usual way. Never raises for the bundle's sake."""
    window = Window()
    if not _LOCK.acquire(blocking=False):
        yield window
        return
    try:
        path = bundle_path()
        if path is None:
            yield window
            return
        # what reading the bundle imports, imported first (the usual way: a submodule
        # imported while the finder reads would be rewritten into the bundle every time)
        import binascii  # noqa: F401

        from accy.runtime import cache_files  # noqa: F401
        bundle = _BUNDLES.get(path)
        if bundle is None:
            bundle = _BUNDLES[path] = _Bundle(path)
        finder = _Finder(bundle)
        before = set(sys.modules)
        sys.meta_path.insert(0, finder)
        try:
            yield window
        finally:
            try:
                sys.meta_path.remove(finder)
            except ValueError:
                pass
        if window.found:
            _update(bundle, before)
    finally:
        _LOCK.release()


def _update(bundle: _Bundle, before: set[str]) -> None:
    """Rewrite ``bundle``'s file when a submodule imported in the window did not come from
    it: what it served, what it still holds (unless its directory changed since) and the
    submodules imported the usual way."""
    import time

    now = time.time_ns()
    added: dict[str, Entry] = {}
    dirs: dict[str, int] = {}
    for name in [n for n in sys.modules if n not in before and n not in bundle.served]:
        made = _record(name, sys.modules.get(name), now)
        if made is not None:
            added[name] = made[0]
            dirs.update(made[1])
    if not added:
        return
    bundle.load()  # (what it holds is kept)
    changed = {d for d, m in dirs.items() if bundle.dirs.get(d, m) != m}
    kept = {n: e for n, e in bundle.modules.items()
            if os.path.dirname(e[0]) not in changed
            and not (e[1] and os.path.dirname(os.path.dirname(e[0])) in changed)}
    modules = {**kept, **bundle.served, **added}
    if len(modules) > _MAX_MODULES:
        modules = {**bundle.served, **added}
    dirs = {**bundle.dirs, **dirs}
    used = {os.path.dirname(e[0]) for e in modules.values()}
    used |= {os.path.dirname(os.path.dirname(e[0])) for e in modules.values() if e[1]}
    if not used <= dirs.keys():  # a served module's directory unrecorded: never serve it
        return
    _write(bundle.path, modules, {d: dirs[d] for d in used})
    # this process imported them all: what it holds now is what it wrote
    bundle.modules, bundle.served, bundle.dirs = {}, modules, {d: dirs[d] for d in used}
