"""This host as LLVM sees it (triple, CPU name, features, LLVM version), cached on disk.

Asking llvmlite costs its import and native-target initialisation (30–80 ms), which a
warm-cache first call that loads a linked shared object (:mod:`accy_backend_cpu.shared_object`)
otherwise never needs. :func:`cached_host` returns what an earlier process stored with
:func:`store_host` in ``<cache_dir>/cpu/host.json`` when the file was written for the same
*host key*: the platform, the machine, the first processor's block of ``/proc/cpuinfo``
(vendor, family, model, stepping, flags; the varying lines — clock, bogomips, ids — left
out), and llvmlite's version with the size and modification time of its LLVM library. A
new CPU (other flags), another LLVM or a host without ``/proc/cpuinfo`` misses, and llvmlite
is asked again. The file keeps the latest eight keys (virtual environments with other
llvmlite builds sharing the cache directory) and goes through
:mod:`accy.runtime.cache_files` (private directory, 0600, atomic); a malformed one is
ignored and rewritten.
"""

from __future__ import annotations

import json
import os
import sys
from functools import cache
from typing import Any

from accy.hashing import sha256

__all__ = ["HostInfo", "cached_host", "host_key", "store_host"]

HostInfo = tuple[str, str, str, tuple[int, ...]]  # triple, cpu, features, llvm version
_KEEP = 8  # host keys remembered in one file
_VARYING = ("mhz", "bogomips", "processor", "apicid", "core id", "physical id", "siblings",
            "cpu cores")
_VARYING_BYTES = tuple(v.encode() for v in _VARYING)


def _first_cpu_block() -> bytes | None:
    try:  # read only the first processor's block (os.read: no file object to make)
        fd = os.open("/proc/cpuinfo", os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
        try:
            data = b""
            while b"\n\n" not in data:
                chunk = os.read(fd, 4096)
                if not chunk:
                    break
                data += chunk
        finally:
            os.close(fd)
    except OSError:
        return None
    block = data.split(b"\n\n", 1)[0]
    keep = []
    for ln in block.splitlines():
        key = ln.split(b":", 1)[0].lower()  # (the varying words are ASCII)
        for v in _VARYING_BYTES:
            if v in key:
                break
        else:
            keep.append(ln)
    return b"\n".join(keep) if keep else None


@cache
def host_key() -> str | None:
    """A sha256 hex of what decides :data:`HostInfo` here, or ``None`` where it cannot be
    told without llvmlite (no ``/proc/cpuinfo``, llvmlite not found)."""
    cpu = _first_cpu_block()
    if cpu is None:
        return None
    from accy.runtime.pipeline_cache import package_spec

    spec = package_spec("llvmlite")  # as importlib.util.find_spec, without importing it
    if spec is None or not spec.submodule_search_locations:
        return None
    binding = os.path.join(next(iter(spec.submodule_search_locations)), "binding")
    libs = []
    try:
        for e in sorted(os.scandir(binding), key=lambda e: e.name):
            if e.name.startswith("libllvmlite") or e.name.endswith((".so", ".dylib", ".dll")):
                st = e.stat()
                libs.append(f"{e.name}:{st.st_size}:{st.st_mtime_ns}")
        st = os.stat(os.path.join(os.path.dirname(binding), "_version.py"))
        libs.append(f"_version.py:{st.st_size}:{st.st_mtime_ns}")
    except OSError:
        return None
    text = "|".join([sys.platform, os.uname().machine if hasattr(os, "uname") else "",
                     str(binding), *libs]).encode() + b"\n" + cpu
    return sha256(text).hexdigest()


def _path() -> str | None:
    from accy import config

    if config.disk_cache_disabled():
        return None
    return os.path.join(config.cache_dir_str(), "cpu", "host.json")


_READ: dict[tuple[str, str], HostInfo] = {}  # (file, host key) -> what this process read


def cached_host() -> HostInfo | None:
    """The stored :data:`HostInfo` for this :func:`host_key`, or ``None`` (miss, disk cache
    disabled or refused, malformed file). Read once per process and file: the backend's
    probe and its target both ask."""
    from accy import config
    from accy.runtime import cache_files

    path, key = _path(), host_key()
    if path is None or key is None:
        return None
    known = _READ.get((path, key))
    if known is not None:
        return known
    if cache_files.chain_problem(os.path.dirname(path), config.cache_dir_str()) is not None:
        return None
    try:
        entry: Any = json.loads(cache_files.read_cache_file(path)).get("hosts", {}).get(key)
        if entry is None:
            return None
        version = tuple(int(v) for v in entry["llvm_version"])
        info = (str(entry["triple"]), str(entry["cpu"]), str(entry["features"]), version)
    except (OSError, ValueError, TypeError, KeyError, AttributeError):
        return None
    if not (all(info[:2]) and version):
        return None
    _READ[(path, key)] = info
    return info


def store_host(info: HostInfo) -> None:
    """Store ``info`` (asked of llvmlite) under this :func:`host_key`; a no-op where there
    is no key, the cache is disabled or the directory cannot be written."""
    from accy import config
    from accy.runtime import cache_files

    path, key = _path(), host_key()
    if path is None or key is None:
        return
    triple, cpu, features, version = info
    entry = {"triple": triple, "cpu": cpu, "features": features, "llvm_version": list(version)}
    try:
        cache_files.ensure_directory_str(os.path.dirname(path))
        if cache_files.chain_problem(os.path.dirname(path), config.cache_dir_str()) is not None:
            return
        try:
            hosts = json.loads(cache_files.read_cache_file(path)).get("hosts")
        except (OSError, ValueError, AttributeError):
            hosts = None
        hosts = hosts if isinstance(hosts, dict) else {}
        hosts.pop(key, None)  # several environments (llvmlite builds) may share the directory:
        hosts[key] = entry    # keep the latest few, this one last
        hosts = dict(list(hosts.items())[-_KEEP:])
        cache_files.write_cache_file(path, json.dumps({"hosts": hosts}).encode())
    except OSError:  # the cache is an optimisation
        pass
