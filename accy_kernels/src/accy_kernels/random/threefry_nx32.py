"""``random.threefry2x32`` / ``random.threefry4x32``: Threefry-N×32-R bijections (R = 20, 13).

Source: Salmon et al., "Parallel Random Numbers: As Easy as 1, 2, 3", SC'11 (Random123),
derived from the Threefish block cipher of Skein (Ferguson et al., 2010). Each round adds,
rotates by the Random123 rotation constants and xors; every four rounds the key schedule
(the key words plus the parity ``0x1BD11BDA ^ k0 ^ ...``) is injected with the injection
count added to the last word. Verified against the threefry2x32 and threefry4x32 lines of
Random123's ``kat_vectors``.
"""

from __future__ import annotations

import numpy as np
from accy.kernel import E, KernelBuilder

__all__ = ["ROT_2X32", "ROT_4X32", "emit", "reference"]

PARITY = 0x1BD11BDA
ROT_2X32 = (13, 15, 26, 6, 17, 29, 16, 24)
ROT_4X32 = ((10, 26), (11, 21), (13, 27), (23, 5), (6, 20), (17, 11), (25, 10), (18, 20))


def _mix_pairs(width: int, r: int) -> list[tuple[int, int, int]]:
    """(a, b, rotation) pairs for round ``r``: ``x[a] += x[b]; x[b] = rotl(x[b]) ^ x[a]``."""
    if width == 2:
        return [(0, 1, ROT_2X32[r % 8])]
    rot = ROT_4X32[r % 8]
    if r % 2 == 0:
        return [(0, 1, rot[0]), (2, 3, rot[1])]
    return [(0, 3, rot[0]), (2, 1, rot[1])]


def emit(kb: KernelBuilder, ctr: list[E], key: list[E], rounds: int) -> list[E]:
    """Emit Threefry-``len(ctr)``x32-``rounds`` on u32 expressions; return the output words."""
    w = len(ctr)
    par = kb.const(PARITY, "u32")
    for k in key:
        par = par ^ k
    ks = [*key, kb.let(kb.fresh("tk"), par)]
    x = [kb.let(kb.fresh("tx"), ctr[i] + ks[i]) for i in range(w)]
    for r in range(rounds):
        for a, b, rot in _mix_pairs(w, r):
            x[a] = kb.let(kb.fresh("tx"), x[a] + x[b])
            x[b] = kb.let(kb.fresh("tx"), ((x[b] << rot) | (x[b] >> (32 - rot))) ^ x[a])
        if r % 4 == 3:
            s = (r + 1) // 4
            for i in range(w):
                inc = ks[(s + i) % (w + 1)] + (s if i == w - 1 else 0)
                x[i] = kb.let(kb.fresh("tx"), x[i] + inc)
    return x


def reference(counter: np.ndarray, key: np.ndarray, rounds: int = 20) -> np.ndarray:
    """Numpy Threefry-Nx32-``rounds``: ``counter`` (M, N) u32, ``key`` (M, N) u32 → (M, N)."""
    w = counter.shape[1]
    mask = np.uint64(0xFFFFFFFF)
    k = [key[:, i].astype(np.uint64) for i in range(w)]
    par = np.uint64(PARITY)
    for ki in k:
        par = par ^ ki
    ks = [*k, par]
    x = [(counter[:, i].astype(np.uint64) + ks[i]) & mask for i in range(w)]
    for r in range(rounds):
        for a, b, rot in _mix_pairs(w, r):
            x[a] = (x[a] + x[b]) & mask
            rotated = ((x[b] << np.uint64(rot)) | (x[b] >> np.uint64(32 - rot))) & mask
            x[b] = rotated ^ x[a]
        if r % 4 == 3:
            s = (r + 1) // 4
            for i in range(w):
                x[i] = (x[i] + ks[(s + i) % (w + 1)] + np.uint64(s if i == w - 1 else 0)) & mask
    return np.stack(x, axis=1).astype(np.uint32)
