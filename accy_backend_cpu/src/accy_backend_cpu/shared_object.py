"""Programs as shared objects: link object code with the system linker, load with ctypes.

Loading object code into MCJIT needs llvmlite (30–80 ms to import) and a target machine and
engine per program. When a system linker is on ``PATH`` (``ld``, else ``cc``; Debian's
``binutils``), :meth:`CpuBackend.compile_program` links the position-independent object code
the worker made (``reloc="pic"``) into a shared object once, and the artifact cache stores
that (format ``"so"``). Loading one is then a ``ctypes.CDLL``:

1. the artifact's bytes (already sha256-checked by the artifact cache) are named by their
   sha256, ``<sha256>.so``, in the artifact cache directory (or, when the disk cache is
   disabled or refused, in a private temporary directory removed at exit);
2. a file already there is read and hashed first: one that is missing, is not a private
   regular file, or whose hash differs (corrupt, truncated) is replaced atomically from the
   artifact — never loaded;
3. ``dlopen`` (``RTLD_NOW``, so an unresolved symbol fails the load rather than a launch).

Undefined symbols of the kernels (libm's ``expf``/``sin``..., ``memcpy``/``memset`` that LLVM
emits for copies) resolve against the process at ``dlopen``, as MCJIT resolves them;
:func:`link` checks at compile time that the object loads, so a program that would not is
kept as object code instead. Without a linker, or when linking fails, programs stay object
code for MCJIT.
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import os
import threading
from typing import TYPE_CHECKING

from accy.hashing import sha256

if TYPE_CHECKING:  # strings inside (a warm start imports no pathlib); Paths where returned
    from pathlib import Path

__all__ = ["SUFFIX", "library_directory", "link", "linker_commands", "load_library"]

SUFFIX = ".so"
_LOCK = threading.Lock()
_PRIVATE: list[str] = []  # the process's temporary directory, once made


def linker_commands() -> list[list[str]]:
    """The commands that may link a shared object, best first; ``"{out}"`` and
    ``"{inputs}"`` stand for the output and the object files (a command without them gets
    ``-o OUT INPUTS`` appended). ``ld`` (~5 ms) with options that keep the file small (one
    page-aligned segment per kind, no static symbol table) and libm as a dependency when
    the kernels call it (so ``expf``/``sin``... resolve even in a process that did not load
    libm globally), plain ``ld -shared`` for linkers without those or without libm's
    development link, then ``cc -shared`` (~50 ms: the driver). Empty when neither is on
    ``PATH``."""
    import shutil

    out = []
    ld = shutil.which("ld")
    io = ["-o", "{out}", "{inputs}"]
    if ld is not None:
        out.append([ld, "-shared", "-s", "-z", "noseparate-code", "-z", "noexecstack", *io,
                    "--as-needed", "-lm"])
        out.append([ld, "-shared", *io])
    cc = shutil.which("cc")
    if cc is not None:
        out.append([cc, "-shared", "-s", *io, "-lm"])
    return out


def library_directory() -> Path:
    """Where shared objects are materialised: the artifact cache directory when the disk
    cache is enabled and trusted, else a private temporary directory (removed at exit)."""
    from pathlib import Path

    return Path(_library_directory())


def _library_directory() -> str:
    from accy.runtime.artifact_cache import ArtifactCache
    from accy.runtime.cache_files import ensure_directory_str

    cache = ArtifactCache()
    directory = cache.directory_str
    if directory is not None:
        try:
            ensure_directory_str(directory)
            if cache.trusted():
                return directory
        except OSError:
            pass
    import shutil
    import tempfile

    with _LOCK:
        if not _PRIVATE:
            path = tempfile.mkdtemp(prefix="accy-cpu-so-")
            atexit.register(shutil.rmtree, path, True)
            _PRIVATE.append(os.path.normpath(path))
        return _PRIVATE[0]


def _materialise(data: bytes, directory: str) -> tuple[str, bool]:
    """The checked file of ``data`` in ``directory``, and whether it was (re)written."""
    from accy.runtime import cache_files

    digest = sha256(data).hexdigest()
    path = os.path.join(directory, f"{digest}{SUFFIX}")
    try:
        present = cache_files.read_cache_file(path)
    except OSError:  # missing, unreadable, a link, another user's or group-writable
        present = None
    if present is None or sha256(present).hexdigest() != digest:
        if present is not None or os.path.islink(path):
            with contextlib.suppress(OSError):
                os.unlink(path)
        cache_files.write_cache_file(path, data)
        return path, True
    with contextlib.suppress(OSError):  # a use refreshes it for the LRU size cap
        os.utime(path)
    return path, False


def load_library(data: bytes, directory: str | os.PathLike[str] | None = None) -> ctypes.CDLL:
    """Load the shared object ``data`` (checked as above) and return its handle.

    Raises:
        OSError: it cannot be written or ``dlopen`` refuses it (not a shared object of this
            machine, or an unresolved symbol).
    """
    from accy.runtime.artifact_cache import ArtifactCache
    from accy.runtime.cache_files import clean_path

    directory = clean_path(directory) if directory is not None else _library_directory()
    path, written = _materialise(data, directory)
    library = ctypes.CDLL(path)
    if written and directory not in _PRIVATE:
        ArtifactCache(directory).materialised(len(data))  # may evict: the mapping stays
    return library


def link(objects: list[bytes], entries: list[str]) -> bytes | None:
    """Link the object files ``objects`` (a program's modules) into one shared object that
    loads here and defines every symbol of ``entries``; return its bytes, or ``None`` (no
    linker, the linker failed, or the result does not load: the caller keeps the object
    code)."""
    import subprocess
    import tempfile

    data = None
    with tempfile.TemporaryDirectory(prefix="accy-link-") as tmp:
        out, sources = os.path.join(tmp, "program.so"), []
        for i, obj in enumerate(objects):
            sources.append(os.path.join(tmp, f"program.{i}.o"))
            with open(sources[-1], "wb") as f:
                f.write(obj)
        for command in linker_commands():
            if "{inputs}" not in command:
                command = [*command, "-o", "{out}", "{inputs}"]
            args = [a for c in command
                    for a in (sources if c == "{inputs}" else [out if c == "{out}" else c])]
            try:
                done = subprocess.run(args, capture_output=True,
                                      timeout=120, check=False)
            except (OSError, subprocess.SubprocessError):
                continue
            if done.returncode == 0 and os.path.exists(out):
                with open(out, "rb") as f:
                    data = f.read()
                break
    if data is None:
        return None
    try:
        library = load_library(data)
        for entry in entries:
            getattr(library, entry)
    except (OSError, AttributeError):
        return None
    return data
