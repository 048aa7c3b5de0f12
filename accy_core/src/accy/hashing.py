"""sha256 for cache keys and checksums without importing :mod:`hashlib` on a warm start.

``import hashlib`` loads OpenSSL's libcrypto (3-6 ms on the 2-core machine), which a
warm-cache first call paid only to hash a few short keys. :func:`sha256` returns CPython's
built-in sha256 object (the ``_sha2`` module, ``_sha256`` before Python 3.12) for inputs of
at most ``BIG`` bytes, and OpenSSL's (``hashlib.sha256``, ~8x faster per byte) for larger
ones. Both give the same digests (FIPS 180-4), so keys do not depend on which one ran.
"""

from __future__ import annotations

from typing import Any

__all__ = ["BIG", "sha256"]

#: inputs longer than this are hashed by OpenSSL through hashlib
BIG = 1 << 16


def _builtin_sha256() -> Any:
    """CPython's own sha256 constructor (stdlib modules ``_sha2`` from 3.12, ``_sha256`` in
    3.11), or None on another implementation."""
    import sys
    from importlib import import_module

    # the one this Python has first: a failed import walks every sys.path entry
    names = ("_sha2", "_sha256") if sys.version_info >= (3, 12) else ("_sha256", "_sha2")
    for name in names:
        try:
            return import_module(name).sha256
        except (ImportError, AttributeError):
            continue
    return None


_builtin = _builtin_sha256()


def sha256(data: bytes | bytearray | memoryview = b"") -> Any:
    """A new sha256 hash object (``update``, ``digest``, ``hexdigest``, ``copy``) over
    ``data``, as ``hashlib.sha256(data)``."""
    if _builtin is None or len(data) > BIG:
        import hashlib

        return hashlib.sha256(data)
    return _builtin(data)
