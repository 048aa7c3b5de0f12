"""Every ``ACCY_*`` environment variable accy reads, with typed accessors.

This module is the only place that reads accy's environment variables. Each accessor reads
``os.environ`` when it is called (never at import), so tests and users may change a variable
between calls. A malformed value raises :class:`~accy.errors.InputError` naming the
variable, what was expected and what was found.

================================  ========  ==============================================
variable                          type      meaning (default)
================================  ========  ==============================================
``ACCY_NUM_THREADS``              int ≥ 1   CPU worker threads (``os.cpu_count()``)
``ACCY_CACHE_DIR``                path      artifact, tuning and pipeline caches
                                            (``platformdirs.user_cache_dir("accy")``)
``ACCY_CACHE_MAX_BYTES``          size      artifact cache cap; least recently used
                                            entries are evicted beyond it; ``0`` = no cap
                                            (1 GiB; suffixes K, M, G = powers of 1024)
``ACCY_DISABLE_DISK_CACHE``       bool      never read or write the disk cache (false)
``ACCY_DISABLE_PLUGIN_AUTOLOAD``  bool      load only accy's built-in plugin (false)
``ACCY_VULKAN_DEVICE``            int|str   Vulkan device index or name substring
                                            (first discrete GPU, else integrated, else CPU)
``ACCY_VULKAN_VALIDATION``        bool      enable the Khronos validation layer (false)
``ACCY_VULKAN_MEMORY``            str       ``auto``/``host``/``staging`` buffers (auto)
``ACCY_CUDA_DEVICE``              int ≥ 0   CUDA device ordinal (0)
``ACCY_OPENCL_DEVICE``            int|str   OpenCL device index or name substring
                                            (first usable GPU, else accelerator, else CPU)
``ACCY_CODEGEN_IN_PROCESS``       bool      run LLVM in this process, not a worker (false)
``ACCY_CODEGEN_WORKERS``          int ≥ 1   codegen worker processes one program's modules
                                            are compiled on in parallel
                                            (``min(os.cpu_count(), 4)``)
``ACCY_TUNING_CACHE``             path      tuning cache file
                                            (``$ACCY_CACHE_DIR/tuning/tuning.json``)
================================  ========  ==============================================

Booleans accept ``1/true/yes/on`` and ``0/false/no/off`` (any case); an empty value counts
as unset.
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING

from accy.errors import InputError
from accy.records import record

if TYPE_CHECKING:  # pathlib (with urllib.parse and ipaddress: ~8 ms) only where a Path is
    from pathlib import Path  # returned; the warm path works on the *_str() strings

__all__ = [
    "DEFAULT_CACHE_MAX_BYTES",
    "VARIABLES",
    "Variable",
    "artifact_cache_dir",
    "artifact_cache_dir_str",
    "cache_dir",
    "cache_dir_str",
    "cache_max_bytes",
    "codegen_in_process",
    "codegen_workers",
    "cuda_device",
    "disk_cache_disabled",
    "num_threads",
    "opencl_device",
    "opencl_program_cache_dir",
    "pipeline_cache_dir",
    "plugin_autoload_disabled",
    "trace_op_limit",
    "tuning_cache_path",
    "tuning_cache_path_str",
    "vulkan_device",
    "vulkan_memory",
    "vulkan_validation",
]

_TRUE = frozenset({"1", "true", "yes", "on"})
_FALSE = frozenset({"0", "false", "no", "off"})


@record
class Variable:
    """Describe one environment variable (for ``--help`` texts and the README table)."""

    name: str
    type: str
    default: str
    help: str


VARIABLES: tuple[Variable, ...] = (
    Variable("ACCY_NUM_THREADS", "int", "os.cpu_count()", "CPU backend worker threads"),
    Variable("ACCY_CACHE_DIR", "path", 'user_cache_dir("accy")',
             "artifact, tuning and pipeline caches"),
    Variable("ACCY_CACHE_MAX_BYTES", "size", "1G", "artifact cache cap (LRU eviction; 0 = none)"),
    Variable("ACCY_DISABLE_DISK_CACHE", "bool", "false", "never use the disk cache"),
    Variable("ACCY_DISABLE_PLUGIN_AUTOLOAD", "bool", "false", "load only built-in plugins"),
    Variable(
        "ACCY_VULKAN_DEVICE", "int|str", "first suitable", "Vulkan device index or name substring"
    ),
    Variable("ACCY_VULKAN_VALIDATION", "bool", "false", "enable Vulkan validation layers"),
    Variable("ACCY_VULKAN_MEMORY", "str", "auto", "Vulkan buffers: auto, host or staging"),
    Variable("ACCY_CUDA_DEVICE", "int", "0", "CUDA device ordinal"),
    Variable(
        "ACCY_OPENCL_DEVICE", "int|str", "first suitable", "OpenCL device index or name substring"
    ),
    Variable("ACCY_CODEGEN_IN_PROCESS", "bool", "false", "run LLVM in-process, no worker"),
    Variable("ACCY_CODEGEN_WORKERS", "int", "min(os.cpu_count(), 4)",
             "codegen worker processes for parallel compilation"),
    Variable("ACCY_TRACE_OP_LIMIT", "int", "100000",
             "ops one accy.jit trace may record before it is refused (0 = no limit)"),
    Variable("ACCY_TUNING_CACHE", "path", "<cache dir>/tuning/tuning.json", "tuning cache file"),
)


def _raw(name: str) -> str | None:
    value = os.environ.get(name)
    if value is None or value.strip() == "":
        return None
    return value.strip()


def _bool(name: str, default: bool) -> bool:
    value = _raw(name)
    if value is None:
        return default
    low = value.lower()
    if low in _TRUE:
        return True
    if low in _FALSE:
        return False
    raise InputError(
        f"environment variable {name}: expected a boolean (1/0, true/false, yes/no, on/off), "
        f"got {value!r}"
    )


def _int(name: str, minimum: int) -> int | None:
    value = _raw(name)
    if value is None:
        return None
    try:
        number = int(value)
    except ValueError:
        number = None
    if number is None or number < minimum:
        raise InputError(
            f"environment variable {name}: expected an integer >= {minimum}, got {value!r}"
        )
    return number


def num_threads() -> int:
    """Return ``ACCY_NUM_THREADS``: worker threads for the CPU backend (default: all cores).

    Raises:
        InputError: the value is not an integer >= 1.
    """
    value = _int("ACCY_NUM_THREADS", 1)
    return value if value is not None else (os.cpu_count() or 1)


def cache_dir() -> Path:
    """Return ``ACCY_CACHE_DIR`` (default: the platform's user cache dir for ``accy``), as
    a ``pathlib.Path``; :func:`cache_dir_str` is the same directory as a string.

    The directory is not created here; writers create it when they first store something.
    """
    from pathlib import Path

    return Path(cache_dir_str())


def cache_dir_str() -> str:
    """Return :func:`cache_dir` as a string, importing neither pathlib nor platformdirs on
    Linux (both together cost a warm-cache first call 10-40 ms).

    ``ACCY_CACHE_DIR`` with ``~`` expanded; else on Linux ``$XDG_CACHE_HOME/accy`` when
    ``XDG_CACHE_HOME`` is an absolute path (the XDG base directory rule), else
    ``~/.cache/accy`` (what ``platformdirs.user_cache_dir("accy")`` answers there); else
    (macOS, Windows, Android) ``platformdirs.user_cache_dir("accy")``.
    """
    value = _raw("ACCY_CACHE_DIR")
    if value is not None:
        return os.path.normpath(os.path.expanduser(value))
    if sys.platform == "linux" and "ANDROID_DATA" not in os.environ:
        xdg = os.environ.get("XDG_CACHE_HOME", "").strip()
        base = xdg if os.path.isabs(xdg) else os.path.expanduser("~/.cache")
        return os.path.join(os.path.normpath(base), "accy")
    import platformdirs

    return os.path.normpath(platformdirs.user_cache_dir("accy"))


DEFAULT_CACHE_MAX_BYTES = 1 << 30
_SIZE_SUFFIXES = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}


def cache_max_bytes() -> int:
    """Return ``ACCY_CACHE_MAX_BYTES``: the artifact cache's size cap in bytes (default 1 GiB).

    Accepts a byte count with an optional binary suffix (``512M``, ``2G``, ``64KiB``); ``0``
    means no cap.

    Raises:
        InputError: the value is not a non-negative size.
    """
    value = _raw("ACCY_CACHE_MAX_BYTES")
    if value is None:
        return DEFAULT_CACHE_MAX_BYTES
    text = value.upper().removesuffix("IB").removesuffix("B")
    digits = text.rstrip("KMGT")
    suffix = text[len(digits):]
    if not digits.isdigit() or suffix not in _SIZE_SUFFIXES:
        raise InputError(
            f"environment variable ACCY_CACHE_MAX_BYTES: expected a size in bytes >= 0 "
            f"(e.g. 1073741824, 512M, 2G), got {value!r}"
        )
    return int(digits) * _SIZE_SUFFIXES[suffix]


def artifact_cache_dir() -> Path:
    """Return the artifact cache directory, ``cache_dir()/artifacts``."""
    return cache_dir() / "artifacts"


def artifact_cache_dir_str() -> str:
    """Return :func:`artifact_cache_dir` as a string (no pathlib import)."""
    return os.path.join(cache_dir_str(), "artifacts")


def pipeline_cache_dir() -> Path:
    """Return the Vulkan pipeline cache directory, ``cache_dir()/vulkan-pipelines``."""
    return cache_dir() / "vulkan-pipelines"


def opencl_program_cache_dir() -> Path:
    """Return the OpenCL program cache directory, ``cache_dir()/opencl-programs``."""
    return cache_dir() / "opencl-programs"


def tuning_cache_path() -> Path:
    """Return ``ACCY_TUNING_CACHE``: the tuning cache file (default under :func:`cache_dir`)."""
    from pathlib import Path

    return Path(tuning_cache_path_str())


def tuning_cache_path_str() -> str:
    """Return :func:`tuning_cache_path` as a string (no pathlib import)."""
    value = _raw("ACCY_TUNING_CACHE")
    if value is not None:
        return os.path.normpath(os.path.expanduser(value))
    return os.path.join(cache_dir_str(), "tuning", "tuning.json")


def disk_cache_disabled() -> bool:
    """Return ``ACCY_DISABLE_DISK_CACHE``: never read or write on-disk caches (default false).

    Raises:
        InputError: the value is not a boolean.
    """
    return _bool("ACCY_DISABLE_DISK_CACHE", False)


def plugin_autoload_disabled() -> bool:
    """Return ``ACCY_DISABLE_PLUGIN_AUTOLOAD``: skip ``accy`` entry points but the built-in.

    Raises:
        InputError: the value is not a boolean.
    """
    return _bool("ACCY_DISABLE_PLUGIN_AUTOLOAD", False)


def vulkan_device() -> int | str | None:
    """Return ``ACCY_VULKAN_DEVICE``: a physical-device index, a (case-insensitive) substring
    of the device name (``"llvmpipe"``, ``"RTX"``), or ``None`` (first suitable).

    Raises:
        InputError: the value looks like an integer but is negative.
    """
    value = _raw("ACCY_VULKAN_DEVICE")
    if value is None or not value.lstrip("+-").isdigit():
        return value
    return _int("ACCY_VULKAN_DEVICE", 0)


_VULKAN_MEMORY = ("auto", "host", "staging")


def vulkan_memory() -> str:
    """Return ``ACCY_VULKAN_MEMORY``: ``auto`` (default: device-local buffers with staging
    copies when the device has memory the host cannot map, host-visible otherwise),
    ``host`` (always host-visible) or ``staging`` (always device-local plus staging).

    Raises:
        InputError: another value.
    """
    value = (_raw("ACCY_VULKAN_MEMORY") or "auto").strip().lower()
    if value not in _VULKAN_MEMORY:
        raise InputError(
            f"environment variable ACCY_VULKAN_MEMORY: expected one of "
            f"{', '.join(_VULKAN_MEMORY)}, got {value!r}"
        )
    return value


def vulkan_validation() -> bool:
    """Return ``ACCY_VULKAN_VALIDATION``: enable the Khronos validation layer (default false).

    Raises:
        InputError: the value is not a boolean.
    """
    return _bool("ACCY_VULKAN_VALIDATION", False)


def cuda_device() -> int:
    """Return ``ACCY_CUDA_DEVICE``: the CUDA device ordinal (default 0).

    Raises:
        InputError: the value is not an integer >= 0.
    """
    value = _int("ACCY_CUDA_DEVICE", 0)
    return 0 if value is None else value


def opencl_device() -> int | str | None:
    """Return ``ACCY_OPENCL_DEVICE``: an index in the list of OpenCL devices (all platforms,
    in enumeration order), a case-insensitive substring of ``"<platform> <device>"``
    (``"pocl"``, ``"Intel"``), or ``None`` (first usable GPU, else accelerator, else CPU).

    Raises:
        InputError: the value looks like an integer but is negative.
    """
    value = _raw("ACCY_OPENCL_DEVICE")
    if value is None or not value.lstrip("+-").isdigit():
        return value
    return _int("ACCY_OPENCL_DEVICE", 0)


def codegen_in_process() -> bool:
    """Return ``ACCY_CODEGEN_IN_PROCESS``: run LLVM in this process, not a worker (default false).

    In-process code generation starts faster, but an LLVM fatal error then aborts the caller.

    Raises:
        InputError: the value is not a boolean.
    """
    return _bool("ACCY_CODEGEN_IN_PROCESS", False)


def codegen_workers() -> int:
    """Return ``ACCY_CODEGEN_WORKERS``: how many codegen worker processes compile the modules
    of one program in parallel (default ``min(os.cpu_count(), 4)``; 1 = serial).

    Raises:
        InputError: the value is not an integer >= 1.
    """
    value = _int("ACCY_CODEGEN_WORKERS", 1)
    return value if value is not None else min(os.cpu_count() or 1, 4)


def trace_op_limit() -> int | None:
    """Return ``ACCY_TRACE_OP_LIMIT``: how many tensor-IR ops one ``accy.jit`` trace may
    record before it is refused with an ``UnsupportedError`` (default 100,000; 0 = no limit,
    returned as None). Python loops run at trace time, so each iteration adds its ops.

    Raises:
        InputError: the value is not an integer >= 0.
    """
    value = _int("ACCY_TRACE_OP_LIMIT", 0)
    if value is None:
        return 100_000
    return value or None
