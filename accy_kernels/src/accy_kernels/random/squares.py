"""``random.squares``: Widynski's Squares counter-based generator (32-bit output).

Source: B. Widynski, "Squares: A Fast Counter-Based RNG", arXiv:2004.06278 (2020). Four
rounds of squaring a 64-bit state, adding the key-derived values and swapping the 32-bit
halves; ``squares32(ctr, key)`` returns the upper half of the last square. Keys should have
well-mixed hex digits: accy derives the key from the seed with SplitMix64 (Steele et al.,
OOPSLA'14) and sets the low bit, instead of Widynski's key table. In the kernel, 64-bit
unsigned arithmetic is done in wrapping i64 with masked shifts.
"""

from __future__ import annotations

import numpy as np
from accy.kernel import E, KernelBuilder

__all__ = ["WORDS", "derive_key", "emit", "reference"]

WORDS = 1
_MASK64 = (1 << 64) - 1


def derive_key(seed: int) -> int:
    """Return the Squares key (a 64-bit unsigned int, odd) for ``seed`` via SplitMix64."""
    z = (seed + 0x9E3779B97F4A7C15) & _MASK64
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK64
    return (z ^ (z >> 31)) | 1


def _as_signed(v: int) -> int:
    return v - (1 << 64) if v >= 1 << 63 else v


def _swap(kb: KernelBuilder, x: E) -> E:
    return kb.let(kb.fresh("sq"), ((x >> 32) & 0xFFFFFFFF) | (x << 32))


def emit(kb: KernelBuilder, ctr: E, key: E) -> E:
    """Emit ``squares32(ctr, key)`` on i64 expressions; return the u32 result."""
    x = kb.let(kb.fresh("sq"), ctr * key)
    y = x
    z = kb.let(kb.fresh("sq"), y + key)
    x = _swap(kb, x * x + y)
    x = _swap(kb, x * x + z)
    x = _swap(kb, x * x + y)
    return (((x * x + z) >> 32) & 0xFFFFFFFF).cast("u32")


def reference(counter: np.ndarray, key: int) -> np.ndarray:
    """Numpy ``squares32``: ``counter`` u64 array → u32 array."""
    with np.errstate(over="ignore"):
        k = np.uint64(key)
        x = counter.astype(np.uint64) * k
        y, z = x, x + k
        for add in (y, z, y):
            x = x * x + add
            x = (x >> np.uint64(32)) | (x << np.uint64(32))
        return ((x * x + z) >> np.uint64(32)).astype(np.uint32)


signed_key = _as_signed
