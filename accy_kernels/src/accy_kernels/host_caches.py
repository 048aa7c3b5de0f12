"""Data-cache sizes of the host CPU, for cache-blocked kernels (``matmul.blocked``).

Read once from Linux sysfs (``/sys/devices/system/cpu/cpu0/cache/index*/{level,type,size}``:
the caches of one core; L3 is usually shared by several). Where sysfs is missing or
unreadable (other systems, containers) the defaults of a common x86-64 core are used:
32 KiB L1d, 512 KiB L2, 8 MiB L3. ``ACCY_HOST_CACHES`` overrides them as three byte
counts ``L1,L2,L3`` (e.g. ``32768,262144,8388608``).
"""

from __future__ import annotations

import functools
import os
from pathlib import Path

__all__ = ["DEFAULT_CACHES", "host_caches", "parse_size"]

#: (L1d, L2, L3) bytes assumed when the host does not say
DEFAULT_CACHES = (32 * 1024, 512 * 1024, 8 * 1024 * 1024)
_SYSFS = Path("/sys/devices/system/cpu/cpu0/cache")


def parse_size(text: str) -> int:
    """Bytes of a sysfs cache size such as ``"32K"``, ``"1M"`` or ``"512"``.

    Raises:
        InputError: not a size.
    """
    from accy.errors import InputError

    t = text.strip().upper()
    scale = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(t[-1:], 1)
    digits = t[:-1] if scale != 1 else t
    if not digits.isdigit():
        raise InputError(f"host caches: {text!r} is not a size (e.g. 32K, 1M, 4096)")
    return int(digits) * scale


@functools.cache
def host_caches(root: str | None = None) -> tuple[int, int, int]:
    """``(L1d, L2, L3)`` data-cache bytes of one core (see the module docstring).

    Args:
        root: a directory laid out like sysfs' ``cpu0/cache`` (tests); None: the host's.

    Raises:
        InputError: ``ACCY_HOST_CACHES`` is not three positive byte counts.
    """
    from accy.errors import InputError

    env = os.environ.get("ACCY_HOST_CACHES")
    if env and root is None:
        parts = env.split(",")
        if len(parts) != 3 or not all(p.strip().isdigit() and int(p) > 0 for p in parts):
            raise InputError(f"ACCY_HOST_CACHES={env!r}: expected three positive byte "
                             "counts L1,L2,L3, e.g. 32768,262144,8388608")
        return int(parts[0]), int(parts[1]), int(parts[2])
    found = dict(enumerate(DEFAULT_CACHES, 1))
    base = Path(root) if root is not None else _SYSFS
    try:
        entries = sorted(base.glob("index*"))
    except OSError:
        entries = []
    for d in entries:
        try:
            level = int((d / "level").read_text())
            kind = (d / "type").read_text().strip()
            size = parse_size((d / "size").read_text())
        except (OSError, ValueError, InputError):
            continue
        if kind in ("Data", "Unified") and level in found and size > 0:
            found[level] = size
    return found[1], found[2], found[3]
