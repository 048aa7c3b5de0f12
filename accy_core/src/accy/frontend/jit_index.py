"""The jit index: a known function's first call with a known signature, without a trace.

numba's function cache, for ``accy.jit``: an entry maps the key of (what a trace of the
function reads, the call's signature, the versions) to what the trace produced that the
call needs — the traced module's fingerprint, its function name, the result tree and the
written arguments. :func:`accy.runtime.compiler.compile_known` then finds the program
through the pipeline cache by that fingerprint (whose key still covers the backend, device,
target profile, options and accy's sources), so a hit costs a key, two cache reads and a
load, and runs neither the function nor a pass.

The key (:func:`index_key`) is the sha256 of: this format, the accy, Python and numpy
versions, :func:`~accy.runtime.pipeline_cache.source_fingerprint` of accy and
accy_kernels, :func:`~accy.frontend.fn_key.function_key` (``None``: no index), the jitted
name, backend and static argument positions, and the signature (trees, dtypes, shapes,
static values: :func:`~accy.frontend.fn_key.value_key`). Entries are artifact-cache entries
of format ``"jit-index"`` (checksummed, atomic, private directory, size cap); one that does
not decode to the expected fields is deleted with one ``CacheWarning`` and the function is
traced again. ``ACCY_DISABLE_DISK_CACHE`` turns it off with the other disk caches.
"""

from __future__ import annotations

import pickle
import sys
from typing import Any

from accy.hashing import sha256

__all__ = ["FORMAT", "Known", "index_key", "load", "store"]

FORMAT = "jit-index-1"


class Known:
    """A decoded index entry: ``module`` (fingerprint), ``function`` (its name),
    ``out_tree`` (the result tree) and ``writes`` (argument leaves written into)."""

    __slots__ = ("function", "module", "out_tree", "writes")

    def __init__(self, module: str, function: str, out_tree: Any,
                 writes: tuple[int, ...]) -> None:
        self.module = module
        self.function = function
        self.out_tree = out_tree
        self.writes = writes


def index_key(fn: Any, name: str, backend: str, static_argnums: frozenset[int],
              signature: Any) -> str | None:
    """The index key of a call of jitted ``fn`` (see the module docstring), or ``None``
    when the call cannot use the index (the disk cache is off, or ``fn`` or the signature
    cannot be keyed)."""
    from accy.frontend.fn_key import function_key, value_key

    fkey = function_key(fn)
    if fkey is None:
        return None
    skey = value_key(signature)
    if skey is None:
        return None
    from accy.runtime.artifact_cache import enabled_cache

    if enabled_cache() is None:
        return None
    from accy.errors import AccyError
    from accy.plugins import open_backend

    try:  # opened first (a hit needs it anyway): the key's plugin sources then come from
        open_backend(backend)  # the entry points that opening read (one lookup, not two)
    except AccyError:
        return None  # no executable without it: the call traces, and compiling raises
    import accy
    from accy.runtime.pipeline_cache import source_fingerprint

    np = sys.modules["numpy"]
    text = "|".join([FORMAT, accy.__version__, sys.version, np.__version__,
                     source_fingerprint("accy_kernels"), fkey, name, backend,
                     repr(sorted(static_argnums)), skey])
    return sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def load(key: str) -> Known | None:
    """The entry under ``key``, or ``None`` (a miss, the cache off or refused, or an entry
    that does not decode to the expected fields: deleted with a ``CacheWarning``)."""
    from accy.runtime.artifact_cache import load_decoded

    return load_decoded(key, FORMAT, _decode, "a jit index entry")


def _decode(data: bytes) -> Known:
    """The :class:`Known` in a payload (any exception: not one)."""
    d = pickle.loads(data)
    known = Known(d["module"], d["function"], d["out_tree"], tuple(d["writes"]))
    if not (type(known.module) is str and type(known.function) is str
            and all(type(w) is int for w in known.writes)):
        raise ValueError("field types")
    hash(known.out_tree)  # a tree is hashable (accy.frontend.tree)
    return known


def store(key: str, known: Known) -> None:
    """Write ``known`` under ``key`` (no-op when the cache is off or it cannot be
    pickled)."""
    from accy.runtime.artifact_cache import enabled_cache

    cache = enabled_cache()
    if cache is None:
        return
    try:
        data = pickle.dumps({"module": known.module, "function": known.function,
                             "out_tree": known.out_tree, "writes": list(known.writes)},
                            protocol=pickle.HIGHEST_PROTOCOL)
    except (pickle.PicklingError, TypeError, AttributeError, RecursionError):
        return
    from accy.backend import Artifact

    cache.store(key, Artifact(backend="jit", kernel_name=known.function, format=FORMAT,
                              data=data, entry="", metadata={}))
