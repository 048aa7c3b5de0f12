"""``random.philox4x32``: the Philox4x32-R counter-based bijection (R = 10 or 7).

Source: J. K. Salmon, M. A. Moraes, R. O. Dror, D. E. Shaw, "Parallel Random Numbers: As
Easy as 1, 2, 3", SC'11 (Random123). One round maps counter ``(c0, c1, c2, c3)`` and key
``(k0, k1)`` to ``(hi(M1*c2) ^ c1 ^ k0, lo(M1*c2), hi(M0*c0) ^ c3 ^ k1, lo(M0*c0))`` with
``M0 = 0xD2511F53``, ``M1 = 0xCD9E8D57``; the key is bumped by the Weyl constants
``W0 = 0x9E3779B9``, ``W1 = 0xBB67AE85`` between rounds. Verified against every philox4x32
line of Random123's ``kat_vectors``.
"""

from __future__ import annotations

import numpy as np
from accy.kernel import E, KernelBuilder, call

__all__ = ["WORDS", "emit", "reference"]

M0, M1 = 0xD2511F53, 0xCD9E8D57
W0, W1 = 0x9E3779B9, 0xBB67AE85
WORDS = 4
KEY_WORDS = 2


def emit(kb: KernelBuilder, ctr: list[E], key: list[E], rounds: int) -> list[E]:
    """Emit Philox4x32-``rounds`` on u32 expressions; return the 4 output words."""
    c = list(ctr)
    k0, k1 = key
    for r in range(rounds):
        if r > 0:
            k0 = kb.let(kb.fresh("pk"), k0 + W0)
            k1 = kb.let(kb.fresh("pk"), k1 + W1)
        m0 = kb.const(M0, "u32")
        m1 = kb.const(M1, "u32")
        hi0 = call("mulhi", m0, c[0])
        hi1 = call("mulhi", m1, c[2])
        lo0 = m0 * c[0]
        lo1 = m1 * c[2]
        c = [kb.let(kb.fresh("pc"), hi1 ^ c[1] ^ k0), kb.let(kb.fresh("pc"), lo1),
             kb.let(kb.fresh("pc"), hi0 ^ c[3] ^ k1), kb.let(kb.fresh("pc"), lo0)]
    return c


def reference(counter: np.ndarray, key: np.ndarray, rounds: int = 10) -> np.ndarray:
    """Numpy Philox4x32-``rounds``: ``counter`` (N, 4) u32, ``key`` (N, 2) u32 → (N, 4) u32."""
    c = [counter[:, i].astype(np.uint64) for i in range(4)]
    k = [key[:, i].astype(np.uint64) for i in range(2)]
    mask = np.uint64(0xFFFFFFFF)
    for r in range(rounds):
        if r > 0:
            k = [(k[0] + W0) & mask, (k[1] + W1) & mask]
        p0, p1 = c[0] * np.uint64(M0), c[2] * np.uint64(M1)
        c = [(p1 >> np.uint64(32)) ^ c[1] ^ k[0], p1 & mask,
             (p0 >> np.uint64(32)) ^ c[3] ^ k[1], p0 & mask]
    return np.stack(c, axis=1).astype(np.uint32)
