"""Philox4x32-R in numpy (Salmon et al., SC'11), for host references of random streams."""

from __future__ import annotations

import numpy as np

__all__ = ["philox4x32_host"]

M0, M1 = 0xD2511F53, 0xCD9E8D57
W0, W1 = 0x9E3779B9, 0xBB67AE85


def philox4x32_host(counter: np.ndarray, key: np.ndarray, rounds: int = 10) -> np.ndarray:
    """``counter`` (N, 4) u32, ``key`` (N, 2) u32 → (N, 4) u32."""
    c = [counter[:, i].astype(np.uint64) for i in range(4)]
    k = [key[:, i].astype(np.uint64) for i in range(2)]
    mask = np.uint64(0xFFFFFFFF)
    for r in range(rounds):
        if r > 0:
            k = [(k[0] + np.uint64(W0)) & mask, (k[1] + np.uint64(W1)) & mask]
        p0, p1 = c[0] * np.uint64(M0), c[2] * np.uint64(M1)
        c = [(p1 >> np.uint64(32)) ^ c[1] ^ k[0], p1 & mask,
             (p0 >> np.uint64(32)) ^ c[3] ^ k[1], p0 & mask]
    return np.stack(c, axis=1).astype(np.uint32)
