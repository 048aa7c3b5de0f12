"""Trusted file access for accy's on-disk caches (artifacts, tuning, Vulkan pipelines).

The caches hold native code that accy loads and runs, so a cache is trusted only as far as
the directory holding it, as ssh does with its keys:

* directories accy creates are mode 0700, files 0600 (written through a temporary file in
  the same directory, then ``os.replace``);
* a cache directory (or one of its parents up to the cache root) that is owned by another
  user or writable by group or others is refused: one :class:`~accy.errors.CacheWarning`
  naming it, then accy works without that cache;
* a cache file that is not a regular file owned by this user, or is writable by group or
  others, is refused the same way (symbolic links are not followed).

Every problem is reported by :func:`warn_once`: one warning per file (or directory) and
problem per process, never an exception. On systems without POSIX ownership (Windows)
only the file checks that make sense there apply.
"""

from __future__ import annotations

import contextlib
import os
import stat
import threading
import warnings
from typing import TYPE_CHECKING

from accy.errors import CacheWarning

if TYPE_CHECKING:  # paths are handled as strings (os.path): a warm start imports no pathlib
    from pathlib import Path

__all__ = [
    "UnsafeCacheFile",
    "chain_problem",
    "check_directory",
    "clean_path",
    "current_uid",
    "directory_problem",
    "ensure_directory",
    "ensure_directory_str",
    "file_token",
    "forget_warnings",
    "owner_is_trusted",
    "read_cache_file",
    "warn_once",
    "write_cache_file",
]

_WARNED: set[tuple[str, str, object]] = set()
_WARNED_LOCK = threading.Lock()
_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)


class UnsafeCacheFile(OSError):
    """A cache file that must not be trusted (``reason`` says why); internal to the caches."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def current_uid() -> int | None:
    """The effective user id whose caches these are (``None`` where there is none)."""
    getuid = getattr(os, "geteuid", None)
    return getuid() if getuid is not None else None


def owner_is_trusted(uid: int) -> bool:
    """Whether files and directories owned by ``uid`` may be trusted: this user's or root's
    (as ssh does). Tests monkeypatch this to pretend that a cache belongs to someone else,
    which also works when they run as root (CI)."""
    return uid in (current_uid(), 0)


def _mode_problem(st: os.stat_result, kind: str) -> str | None:
    uid = current_uid()
    if uid is not None and not owner_is_trusted(st.st_uid):
        return f"is owned by uid {st.st_uid}, not by this user (uid {uid}) or root"
    if uid is not None and st.st_mode & 0o022:
        return (f"is writable by group or others (mode {stat.S_IMODE(st.st_mode):04o}; "
                f"chmod go-w the {kind})")
    return None


def directory_problem(path: str | os.PathLike[str]) -> str | None:
    """Why the existing directory ``path`` may not hold a cache, or ``None`` (fine).

    A missing path or one that is not a directory gives ``None``: reading from it misses
    and writing to it fails on its own.
    """
    try:
        st = os.stat(path)
    except OSError:
        return None
    if not stat.S_ISDIR(st.st_mode):
        return None
    return _mode_problem(st, "directory")


def clean_path(path: str | os.PathLike[str]) -> str:
    """``path`` as a normalised string (``""`` is ``"."``, as for ``pathlib.Path``)."""
    text = os.fspath(path)
    return os.path.normpath(text) if text else "."


def _parent(path: str) -> str:
    """The parent of the normalised ``path`` (``"/"`` and ``"."`` are their own)."""
    return os.path.dirname(path) or ("." if path not in ("", ".") else path)


def _chain(leaf: str, root: str | None) -> list[str]:
    """``leaf`` and its parents up to ``root`` (only ``leaf`` when it is not under root);
    both normalised."""
    out = [leaf]
    parents = []
    probe = leaf
    while (parent := _parent(probe)) != probe:
        parents.append(parent)
        probe = parent
    if root is None or root == leaf or root not in parents:
        return out
    for parent in parents:
        out.append(parent)
        if parent == root:
            break
    return out


def chain_problem(leaf: str | os.PathLike[str],
                  root: str | os.PathLike[str] | None) -> tuple[Path, str] | None:
    """The first of ``leaf`` and its parents up to ``root`` that may not hold a cache, with
    why, or ``None`` (all fine). Issues no warning."""
    for directory in _chain(clean_path(leaf), clean_path(root) if root is not None else None):
        problem = directory_problem(directory)
        if problem is not None:
            from pathlib import Path

            return Path(directory), problem
    return None


def check_directory(leaf: str | os.PathLike[str], root: str | os.PathLike[str] | None,
                    what: str) -> bool:
    """Return whether the cache directory ``leaf`` may be used.

    Checks ``leaf`` and each parent up to ``root`` (the cache root, e.g. ``ACCY_CACHE_DIR``)
    that exists. On a problem: one :class:`~accy.errors.CacheWarning` per process and
    directory, and ``False``.

    Args:
        leaf: the directory holding the cache's files.
        root: the top of accy's cache tree, or ``None``.
        what: the cache's name for the message (``"artifact cache"``).
    """
    found = chain_problem(leaf, root)
    if found is None:
        return True
    directory, problem = found
    warn_once(directory, "unsafe",
              f"{what} directory {str(directory)!r} {problem}; it is not used (working "
              "without this cache): fix its owner and mode, or point ACCY_CACHE_DIR at a "
              "private directory")
    return False


def ensure_directory(leaf: str | os.PathLike[str]) -> Path:
    """Create ``leaf`` and any missing parents with mode 0700; return it (a ``Path``).

    Raises:
        OSError: a level cannot be created (read-only, a file in the way).
    """
    from pathlib import Path

    return Path(ensure_directory_str(leaf))


def ensure_directory_str(leaf: str | os.PathLike[str]) -> str:
    """:func:`ensure_directory` on strings (no pathlib import); returns the normalised
    ``leaf``.

    Raises:
        OSError: a level cannot be created (read-only, a file in the way).
    """
    path = clean_path(leaf)
    missing = []
    probe = path
    while not os.path.exists(probe):
        missing.append(probe)
        parent = _parent(probe)
        if parent == probe:
            break
        probe = parent
    for directory in reversed(missing):
        with contextlib.suppress(FileExistsError):  # another process was faster
            os.mkdir(directory, 0o700)
    if not os.path.isdir(path):
        raise NotADirectoryError(f"{path} is not a directory")
    return path


def read_cache_file(path: str | os.PathLike[str]) -> bytes:
    """Return the bytes of the cache file ``path``, checked (on the open file) first.

    Raises:
        FileNotFoundError: there is no such file, or a file stands where a directory of its
            path should be (an ordinary miss).
        UnsafeCacheFile: a symbolic link, not a regular file, owned by another user or
            writable by group or others.
        OSError: it cannot be read.
    """
    try:
        fd = os.open(path, _OPEN_FLAGS)
    except NotADirectoryError as e:  # a file where a cache directory should be: a miss
        raise FileNotFoundError(str(e)) from e
    except OSError as e:
        if os.path.islink(path):
            raise UnsafeCacheFile("is a symbolic link") from e
        raise
    with os.fdopen(fd, "rb") as f:
        st = os.fstat(f.fileno())
        if not stat.S_ISREG(st.st_mode):
            raise UnsafeCacheFile("is not a regular file")
        problem = _mode_problem(st, "file")
        if problem is not None:
            raise UnsafeCacheFile(problem)
        return f.read()


def write_cache_file(path: str | os.PathLike[str], data: bytes, fsync: bool = False) -> None:
    """Write ``data`` to ``path`` (mode 0600) atomically: a temporary file in the same
    directory (created 0700 if missing), then ``os.replace``.

    Raises:
        OSError: the directory or file cannot be written; no temporary file is left.
    """
    target = clean_path(path)
    directory = ensure_directory_str(_parent(target))
    fd, tmp = _temporary(directory, f".tmp-{os.path.basename(target)}.")
    try:
        with os.fdopen(fd, "wb") as f:
            if hasattr(os, "fchmod"):
                os.fchmod(f.fileno(), 0o600)
            f.write(data)
            if fsync:
                f.flush()
                os.fsync(f.fileno())
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _temporary(directory: str, prefix: str) -> tuple[int, str]:
    """A new file ``<directory>/<prefix><random>`` opened for writing, mode 0600, as
    ``tempfile.mkstemp`` makes it (``O_EXCL``, not following links), without importing
    :mod:`tempfile` (with shutil, random, bz2 and lzma: ~5 ms of a process that writes one
    small cache file).

    Raises:
        OSError: the file cannot be created (``FileExistsError`` after 100 tries).
    """
    flags = (os.O_RDWR | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
             | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0))
    for _ in range(100):
        name = os.path.join(directory, prefix + os.urandom(6).hex())
        try:
            return os.open(name, flags, 0o600), name
        except FileExistsError:
            continue
    raise FileExistsError(f"no free temporary name in {directory!r}")


def file_token(path: str | os.PathLike[str]) -> object:
    """What identifies the present version of the file ``path`` (so that a later corruption
    of the same file warns again); ``None`` when it is absent."""
    try:
        st = os.lstat(path)
    except OSError:
        return None
    return (st.st_ino, st.st_mtime_ns, st.st_size)


def warn_once(path: str | os.PathLike[str], reason: str, message: str,
              token: object = None) -> bool:
    """Issue ``CacheWarning(message)`` unless this (path, reason, token) was reported already
    in this process; return whether it was issued."""
    key = (str(path), reason, token)
    with _WARNED_LOCK:
        if key in _WARNED:
            return False
        _WARNED.add(key)
    warnings.warn(CacheWarning(message, path=str(path), reason=reason), stacklevel=3)
    return True


def forget_warnings() -> None:
    """Forget which problems were reported (tests; a long-lived process after a fix)."""
    with _WARNED_LOCK:
        _WARNED.clear()
