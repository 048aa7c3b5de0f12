"""On-disk cache of the staged pipeline's product: the launch graph of a compiled program.

With it, the first call of a program compiled by an earlier process costs a lookup and a
load: no pass runs (:func:`accy.compile` reads the graph here, then the program's object code
from the artifact cache). Entries live in the artifact cache directory
(:class:`~accy.runtime.artifact_cache.ArtifactCache`: 0700 directory, 0600 files written
atomically, sha256-checked, LRU size cap), as artifacts of format ``"launch-graph"`` whose
payload is the pickled :class:`~accy.runtime.graph.LaunchGraph` with its kernel IR pickled
apart: a warm call needs only the kernels' names, fingerprints and buffer dtypes and accesses
(stored in the graph) and the program's object code, so the kernel IR is unpickled, as a
:class:`LazyKernels` table, only when something reads it (profiling, tuning, another
backend, ``exe.kernels``) and a warm process imports no kernel IR module.

The key covers the module fingerprint, the function, the backend, its device fingerprint and
target profile (the limits the passes obey), a host backend's thread count (plans size their
jobs by it), the compile options, the accy version and
:func:`source_fingerprint` (so an edited pass never serves a stale graph, even at the same
version). An entry that cannot be read back
(truncated, bad checksum, a pickle of classes that changed) is deleted with one
:class:`~accy.errors.CacheWarning` and the program is compiled again.

Pickle is used because a graph holds kernel IR and numpy constants; the file is only ever
read from a directory that the cache refuses unless it is private to the user
(:mod:`accy.runtime.cache_files`).
"""

from __future__ import annotations

import dataclasses
import os
import pickle
import sys
import threading
from collections.abc import Callable, Iterator, Mapping
from functools import lru_cache
from operator import attrgetter
from typing import Any

from accy.hashing import sha256

__all__ = ["FORMAT", "LazyKernels", "load_graph", "package_spec", "pipeline_key",
           "source_fingerprint", "stable_repr", "store_graph"]

FORMAT = "launch-graph"


@lru_cache(maxsize=8)
def _tree_fingerprint(root: str) -> str:
    """The digest of the path, size and modification time of every ``.py`` file under
    ``root``: from its memo (:func:`_memo_digest`: one ``stat`` per file and directory,
    nothing listed, nothing hashed) when every one still matches, else walked and hashed
    (and the memo rewritten)."""
    memo = _memo_path(root)
    digest = _memo_digest(memo, root) if memo is not None else None
    if digest is not None:
        return digest
    dirs: list[tuple[str, int]] = []
    files: list[tuple[str, int, int]] = []
    digest = _walk_fingerprint(root, dirs, files)
    if memo is not None and dirs:
        _store_memo(memo, root, digest, dirs, files)
    return digest


def _walk_fingerprint(root: str, dirs: list[tuple[str, int]],
                      files: list[tuple[str, int, int]]) -> str:
    # one scandir per directory, one stat per .py file (relative to the open directory: a
    # shorter path walk), paths relative to ``root``, hashed once; each directory's mtime
    # (read before its listing) and each file's size and mtime go into the memo's lists
    rows = [root, "\n"]
    if os.scandir not in os.supports_fd or os.stat not in os.supports_dir_fd:
        return _tree_fingerprint_by_path(root, rows)  # e.g. Windows
    stack = [""]
    stat = os.stat
    whole = True  # every directory read (else no memo: one read later could differ)
    while stack:
        rel = stack.pop()
        try:
            fd = os.open(os.path.join(root, rel) if rel else root,
                         os.O_RDONLY | os.O_DIRECTORY | getattr(os, "O_CLOEXEC", 0))
        except OSError:
            whole = False
            continue
        try:
            dirs.append((rel, os.fstat(fd).st_mtime_ns))
            with os.scandir(fd) as it:
                for e in it:
                    name = e.name
                    if name.endswith(".py"):
                        st = stat(name, dir_fd=fd, follow_symlinks=True)
                        rows.append(f"{rel}{name}|{st.st_size}|{st.st_mtime_ns}\n")
                        files.append((f"{rel}{name}", st.st_size, st.st_mtime_ns))
                    elif name != "__pycache__" and e.is_dir(follow_symlinks=False):
                        stack.append(f"{rel}{name}{os.sep}")
        except OSError:
            whole = False
            continue
        finally:
            os.close(fd)
    if not whole:
        dirs.clear()
    return _digest(rows)


_MEMO_MAGIC, _RACY_NS = b"ACCYSRC3\n", 2_000_000_000  # (younger files: no memo)


def _memo_path(root: str) -> str | None:
    """The memo file of source tree ``root`` (``None``: the disk cache is disabled)."""
    from accy import config

    if config.disk_cache_disabled():
        return None
    name = sha256(root.encode("utf-8", "surrogateescape")).hexdigest()[:24]
    return os.path.join(config.cache_dir_str(), "sources", f"{name}.bin")


def _memo_digest(path: str, root: str) -> str | None:
    """The digest the memo at ``path`` holds for ``root`` when every directory it lists has
    its recorded modification time (so the same entries: a file added, removed or renamed
    changes its directory's) and every file its recorded size and modification time (an
    edit in place changes those), else ``None``. A memo that is refused or does not decode
    or whose sha256 does not check is ``None`` too."""
    import json

    from accy import config
    from accy.runtime import cache_files

    try:
        if cache_files.chain_problem(os.path.dirname(path), config.cache_dir_str()):
            return None
        data = cache_files.read_cache_file(path)
    except OSError:
        return None
    head = len(_MEMO_MAGIC) + 65  # the magic, the payload's sha256 (hex) and a newline
    if not data.startswith(_MEMO_MAGIC) or \
            sha256(data[head:]).hexdigest().encode() != data[len(_MEMO_MAGIC):head - 1]:
        return None
    try:
        got, version, digest, dirs, files, stamp = json.loads(data[head:])
        if got != root or version != sys.hexversion or type(digest) is not str or not dirs:
            return None
        # map: the stat calls in one C loop (a Python loop cost as much as the calls)
        prefix = root + os.sep
        dir_mtimes = tuple(map(_MTIME, map(os.stat, map(prefix.__add__, dirs))))
        found = list(map(os.stat, map(prefix.__add__, files)))
        if _stamp(dir_mtimes, tuple(map(_MTIME, found)), tuple(map(_SIZE, found))) != stamp:
            return None
    except (OSError, ValueError, TypeError):
        return None
    return digest


def _stamp(dir_mtimes: tuple[int, ...], mtimes: tuple[int, ...], sizes: tuple[int, ...]) -> int:
    """What the memo compares: Python's hash of the integers (ints are not salted: the
    same in every process of one version), so a new process parses one number, not ~600."""
    return hash((dir_mtimes, mtimes, sizes))


_MTIME, _SIZE = attrgetter("st_mtime_ns"), attrgetter("st_size")


def _store_memo(path: str, root: str, digest: str, dirs: list[tuple[str, int]],
                files: list[tuple[str, int, int]]) -> None:
    """Write the memo of a walk of ``root``, unless a file or directory was modified less
    than two seconds ago (a change within the same clock tick would not be seen)."""
    import json
    import time

    from accy import config
    from accy.runtime import cache_files

    recent = time.time_ns() - _RACY_NS
    if any(m > recent for _, m in dirs) or any(m > recent for _, _, m in files):
        return
    stamp = _stamp(tuple(m for _, m in dirs), tuple(m for _, _, m in files),
                   tuple(z for _, z, _ in files))
    payload = json.dumps([root, sys.hexversion, digest, [d for d, _ in dirs],
                          [f for f, _, _ in files], stamp]).encode()
    data = _MEMO_MAGIC + sha256(payload).hexdigest().encode() + b"\n" + payload
    try:
        cache_files.ensure_directory_str(os.path.dirname(path))
        if cache_files.chain_problem(os.path.dirname(path), config.cache_dir_str()) is None:
            cache_files.write_cache_file(path, data)
    except OSError:  # an optimisation: the next process walks the tree again
        pass


def _tree_fingerprint_by_path(root: str, rows: list[str]) -> str:
    """:func:`_tree_fingerprint` where directories cannot be opened (same rows)."""
    cut = len(root) + 1
    stack = [root]
    while stack:
        top = stack.pop()
        try:
            with os.scandir(top) as it:
                for e in it:
                    if e.name.endswith(".py"):
                        st = e.stat()
                        rows.append(f"{e.path[cut:]}|{st.st_size}|{st.st_mtime_ns}\n")
                    elif e.name != "__pycache__" and e.is_dir(follow_symlinks=False):
                        stack.append(e.path)
        except OSError:
            continue
    return _digest(rows)


def _digest(rows: list[str]) -> str:
    rows[2:] = sorted(rows[2:])
    return sha256("".join(rows).encode("utf-8", "surrogateescape")).hexdigest()


def package_spec(top: str) -> Any | None:
    """The module spec of top-level module ``top`` as ``importlib.util.find_spec`` finds it
    (``sys.meta_path``: path entries and editable-install finders), importing neither it nor
    ``importlib.util`` (~0.4 ms of a warm first call); ``None`` when it is not installed."""
    for finder in sys.meta_path:
        find = getattr(finder, "find_spec", None)
        if find is None:
            continue
        try:
            spec = find(top, None)
        except (ImportError, ValueError, AttributeError, TypeError):
            continue
        if spec is not None:
            return spec
    return None


_FOUND: dict[str, str] = {}  # top-level name -> its file, once found (a lookup walks sys.path)


def _found_file(top: str) -> str | None:
    """The file of top-level module ``top`` that :func:`package_spec` finds (remembered
    once found: the tree fingerprints themselves are computed once per process)."""
    file = _FOUND.get(top)
    if file is None:
        spec = package_spec(top)
        file = spec.origin if spec is not None and spec.has_location else None
        if file:
            _FOUND[top] = file
    return file


#: the distributions of this repository (their sources are named by the callers of
#: :func:`source_fingerprint`); every other plugin's source is added by :func:`_plugin_tops`
_FIRST_PARTY = frozenset({"accy", "accy_kernels", "accy_backend_cpu", "accy_backend_vulkan",
                          "accy_backend_opencl", "accy_backend_cuda"})


@lru_cache(maxsize=1)
def _installed_plugin_tops() -> tuple[str, ...]:
    # the "accy" entry points from the plugin loader's cached table (no importlib.metadata
    # scan, no pluggy import): a third-party family, pass or backend package
    from accy.plugins import entry_cache

    found = entry_cache.last_entry_points("accy")  # a warm process's backend opening read them
    if found is None:
        found = entry_cache.entry_points("accy")
    tops = {ep.value.partition(":")[0].strip().split(".")[0] for ep in found}
    return tuple(sorted(tops - _FIRST_PARTY))


def _plugin_tops() -> tuple[str, ...]:
    """Top-level modules of the plugins outside this repository: the installed ``accy``
    entry points, and the plugins registered by hand on the live plugin manager (a family
    defined in a script), so that editing or upgrading one never serves a graph or a jit
    index entry its old code made."""
    tops = set(_installed_plugin_tops())
    plugins = sys.modules.get("accy.plugins")
    manager = getattr(plugins, "_manager", None)
    if manager is not None:
        for _, plugin in manager.pluggy_manager.list_name_plugin():
            name = getattr(plugin, "__name__", None) if isinstance(plugin, type(sys)) \
                else type(plugin).__module__
            top = str(name).split(".")[0]
            if name and top not in _FIRST_PARTY:
                tops.add(top)
    return tuple(sorted(tops))


@lru_cache(maxsize=1)
def _process_nonce() -> str:
    return os.urandom(16).hex()


def _plugin_stamp(top: str) -> str:
    """The digest of a plugin's sources: a package's :func:`_tree_fingerprint`, a one-file
    module's (``__main__``, a script's or a ``conftest``'s) path, size and modification
    time; imported or found by :func:`package_spec`."""
    module = sys.modules.get(top)
    if module is not None:
        file, package = getattr(module, "__file__", None), hasattr(module, "__path__")
    else:
        spec = package_spec(top)
        file = spec.origin if spec is not None and spec.has_location else None
        package = spec is not None and spec.submodule_search_locations is not None
    if not file:  # no source to stamp (defined interactively): shared with no other process
        return f"{top}|unstamped|{_process_nonce()}"
    if package:
        return _tree_fingerprint(os.path.dirname(file))
    try:
        st = os.stat(file)
    except OSError:
        return f"{top}|{file}|unstamped|{_process_nonce()}"
    return f"{top}|{file}|{st.st_size}|{st.st_mtime_ns}"


def source_fingerprint(*modules: str) -> str:
    """A digest of the path, size and modification time of every ``.py`` file of ``accy``,
    of the named top-level packages that are installed (imported or not: a process that
    opened its backend without a full plugin discovery has not imported ``accy_kernels``,
    and must find the entry a discovering process stored; computed once per process), and
    of every plugin from outside this repository (:func:`_plugin_tops`). A package's digest
    comes from its memo in the cache directory when every file and directory it lists is
    unchanged (:func:`_tree_fingerprint`; ``docs/caches.md``)."""
    roots = []
    stamps = [_plugin_stamp(top) for top in _plugin_tops()]
    for name in ("accy", *modules):
        top = name.split(".")[0]
        file = getattr(sys.modules.get(top), "__file__", None)
        if file is None and top not in sys.modules:
            file = _found_file(top)
        if file:
            roots.append(os.path.dirname(file))
    return sha256("|".join([*(_tree_fingerprint(r) for r in sorted(set(roots))),
                            *stamps]).encode("utf-8", "surrogateescape")).hexdigest()


def stable_repr(x: Any) -> str:
    """``repr`` that is the same in every process: sets and dicts in sorted order (string
    hashing, and so set order, differs between processes), dataclasses field by field."""
    if dataclasses.is_dataclass(x) and not isinstance(x, type):
        inner = ",".join(f"{f.name}={stable_repr(getattr(x, f.name))}"
                         for f in dataclasses.fields(x))
        return f"{type(x).__name__}({inner})"
    if isinstance(x, (set, frozenset)):
        return "{" + ",".join(sorted(stable_repr(i) for i in x)) + "}"
    if isinstance(x, dict):
        return "{" + ",".join(sorted(f"{stable_repr(k)}:{stable_repr(v)}"
                                     for k, v in x.items())) + "}"
    if isinstance(x, (list, tuple)):
        return "(" + ",".join(stable_repr(i) for i in x) + ")"
    return repr(x)


def pipeline_key(module_fingerprint: str, function: str, backend: Any, options: Any) -> str:
    """The cache key of ``function`` of a module compiled for a live ``backend`` with
    ``options`` (any ``repr``-stable value: verify flag, launch choices, tuning token)."""
    import accy

    caps = backend.capabilities()
    # a host-memory backend's pool: families size their jobs by its threads and ranges
    # and split threshold (accy_kernels.matmul_host.host_parts, spread), and the graph
    # holds the plan
    pool = getattr(backend, "pool", None)
    threads = (getattr(pool, "num_threads", None), getattr(pool, "ranges_per_thread", None),
               getattr(pool, "min_items_per_thread", None))
    text = "|".join([FORMAT, module_fingerprint, function, backend.name,
                     caps.device_fingerprint, stable_repr(backend.target_profile()),
                     repr(threads),
                     stable_repr(options),
                     accy.__version__,
                     source_fingerprint(type(backend).__module__, "accy_kernels")])
    return sha256(text.encode()).hexdigest()


class LazyKernels(Mapping):
    """Kernel name → kernel IR of a launch graph read from the pipeline cache: the names
    are known at once, the kernels are unpickled (once, under a lock) when one is read.

    Args:
        names: the kernel names, in the graph's order.
        blob: the pickled ``dict`` of name → :class:`~accy.kernel.Kernel`.
        key: the pipeline-cache key of the entry it came from.

    Attributes:
        rebuild: ``None`` or a callable returning the table afresh (name → kernel), used
            when ``blob`` does not decode to those names (then the entry is deleted with one
            ``CacheWarning``); the compiler sets it to a rerun of the stages.

    Raises:
        InternalError: on reading a kernel, when ``blob`` does not decode and there is no
            ``rebuild`` (the entry was checksummed: a bug, please report).
    """

    __slots__ = ("_blob", "_key", "_kernels", "_lock", "_names", "rebuild")

    def __init__(self, names: tuple[str, ...], blob: bytes, key: str) -> None:
        self._names = names
        self._blob = blob
        self._key = key
        self._kernels: dict[str, Any] | None = None
        self._lock = threading.Lock()
        self.rebuild: Callable[[], dict[str, Any]] | None = None

    def _table(self) -> dict[str, Any]:
        table = self._kernels
        if table is None:
            with self._lock:
                table = self._kernels
                if table is None:
                    table = self._kernels = self._decode()
                    self._blob = b""
        return table

    def _decode(self) -> dict[str, Any]:
        try:
            table = pickle.loads(self._blob)
            if type(table) is not dict or tuple(table) != self._names:
                raise ValueError("kernel names")
            return table
        except Exception as e:  # noqa: BLE001 - any undecodable payload is a corrupt entry
            from accy.runtime.artifact_cache import enabled_cache

            cache = enabled_cache()
            if cache is not None:
                cache.discard(self._key, "holds kernel IR that cannot be decoded "
                              f"({type(e).__name__})")
            if self.rebuild is None:
                from accy.errors import InternalError

                raise InternalError("the kernel IR of a cached launch graph cannot be "
                                    "decoded (its entry was deleted); please report") from e
            table = dict(self.rebuild())
            if tuple(table) != self._names:
                from accy.errors import InternalError

                raise InternalError("the stages run again made other kernels than the "
                                    "cached launch graph names; please report") from e
            return table

    def __getitem__(self, name: str) -> Any:
        return self._table()[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._names)

    def __len__(self) -> int:
        return len(self._names)

    def __contains__(self, name: object) -> bool:
        return name in self._names

    def __reduce__(self) -> tuple:
        return dict, (dict(self._table()),)

    def __repr__(self) -> str:
        state = "loaded" if self._kernels is not None else "not loaded"
        return f"LazyKernels({list(self._names)!r}, {state})"


def _decode_graph(key: str) -> Callable[[bytes], Any]:
    def decode(data: bytes) -> Any:
        graph, names, blob = pickle.loads(data)
        if type(names) is not tuple or type(blob) is not bytes:
            raise ValueError("kernel table")
        graph.kernels = LazyKernels(names, blob, key)
        return graph

    return decode


def load_graph(key: str) -> Any | None:
    """The launch graph stored under ``key`` (its ``kernels`` a :class:`LazyKernels`), or
    ``None`` (miss, cache disabled or refused, or an entry that cannot be decoded: deleted
    with a ``CacheWarning``)."""
    from accy.runtime.artifact_cache import load_decoded

    return load_decoded(key, FORMAT, _decode_graph(key), "a launch graph")


def store_graph(key: str, graph: Any) -> None:
    """Store ``graph`` under ``key`` (no-op when the cache is disabled or the graph cannot
    be pickled); fills its ``fingerprints``, ``buffer_specs`` and ``fast_code``."""
    from accy.runtime.artifact_cache import enabled_cache

    cache = enabled_cache()
    if cache is None:
        return
    kernels = dict(graph.kernels)
    # the loading process then need not print the kernels to find their object code, nor
    # read them to know which slots a launch writes
    graph.fingerprints = {n: k.fingerprint() for n, k in kernels.items()}
    from accy.runtime.graph import buffer_spec

    graph.buffer_specs = {n: buffer_spec(k) for n, k in kernels.items()}
    from accy.runtime.fast_call import compiled_source

    graph.fast_code = compiled_source(graph)  # and compile no Python for its small calls
    try:
        blob = pickle.dumps(kernels, protocol=pickle.HIGHEST_PROTOCOL)
        data = pickle.dumps((dataclasses.replace(graph, kernels={}), tuple(kernels), blob),
                            protocol=pickle.HIGHEST_PROTOCOL)
    except (pickle.PicklingError, TypeError, AttributeError, RecursionError):
        return
    from accy.backend import Artifact

    cache.store(key, Artifact(backend="pipeline", kernel_name=getattr(graph, "name", "graph"),
                              format=FORMAT, data=data, entry="", metadata={}))
