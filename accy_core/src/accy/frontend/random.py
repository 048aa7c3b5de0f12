"""``anp.random``: counter-based random numbers with explicit keys (no hidden state).

``key = anp.random.key(42)`` is a host array naming a stream; pass it into a jitted
function like any array and draw with ``anp.random.uniform(key, shape)``. The same key
gives the same numbers on every backend (the generator is the ``random`` kernel family's
Philox4x32-10, Salmon et al., "Parallel random numbers: as easy as 1, 2, 3", SC 2011).
Use a different key (``anp.random.fold_in(key, i)``) for each independent draw.
"""

from __future__ import annotations

import inspect
from typing import Any

import numpy as np

from accy.errors import InputError, UnsupportedError
from accy.frontend.indexing import _needs_op
from accy.frontend.numpy_api import trace_of, value_of, wrap
from accy.frontend.trace import user_location
from accy.frontend.tracer import Tracer
from accy.ir import DType

__all__ = ["fold_in", "key", "uniform"]


def key(seed: int) -> np.ndarray:
    """A key for ``seed`` (a Python int < 2**64): uint32[2] ``(low word, high word)``."""
    if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, (int, np.integer)) or \
            not 0 <= int(seed) < 1 << 64:
        # int(seed) % 2**64 turned key(1.5) into key(1) and key(-1) into key(2**64 - 1)
        raise InputError(f"anp.random.key: seed must be an integer in [0, 2**64), got "
                         f"{seed!r}")
    s = int(seed)
    return np.array([s & 0xFFFFFFFF, s >> 32], dtype=np.uint32)


def fold_in(k: Any, data: int) -> Any:
    """A new key derived from ``k`` and the Python int ``data`` (adds to the high word)."""
    if not isinstance(k, Tracer):  # a host key stays host data (a static seed) in a trace
        out = np.array(k, dtype=np.uint32).copy()
        out[1] = (int(out[1]) + int(data) * 0x9E3779B9 + 1) & 0xFFFFFFFF
        return out
    from accy.frontend.numpy_api import add

    return add(k, np.array([0, (int(data) * 0x9E3779B9 + 1) & 0xFFFFFFFF], dtype=np.uint32))


def _static_seed(k: Any) -> int:
    if isinstance(k, Tracer):
        raise UnsupportedError(
            f"anp.random.uniform at {user_location()}: this accy's random op takes a seed "
            "fixed at trace time, got a traced key; close over the key (a host array from "
            "anp.random.key) or pass it with static_argnums", feature="traced random key",
            alternative="static key")
    words = np.asarray(k, dtype=np.uint32).reshape(-1)
    return int(words[0]) | (int(words[1]) << 32)


def uniform(k: Any, shape: Any = (), dtype: Any = np.float32, minval: float = 0.0,
            maxval: float = 1.0) -> Any:
    """Uniform samples in ``[minval, maxval)`` of ``shape`` (f32 | f64) from key ``k``.

    Raises:
        UnsupportedError: the random op is not available (accy_kernels not installed).
    """
    tr = trace_of(k)
    if tr is None:
        raise UnsupportedError(
            "anp.random.uniform outside a jitted function: accy draws random numbers on the "
            "backend; call it inside an accy.jit function", feature="eager random",
            alternative="accy.jit")
    op = _needs_op(tr, "random_uniform")
    shape = (int(shape),) if isinstance(shape, (int, np.integer)) else tuple(shape)
    dt = DType.parse(dtype)
    if "key" in inspect.signature(op).parameters:
        u = op(key=value_of(tr, k, DType.U32), shape=shape, dtype=dt)
    else:  # the op takes a static seed: the key must be host data at trace time
        u = op(shape, seed=_static_seed(k), dtype=dt)
    out = wrap(tr, u)
    if (minval, maxval) != (0.0, 1.0):
        out = out * (maxval - minval) + minval
    return out
