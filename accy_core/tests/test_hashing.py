"""accy.hashing: the same digests as hashlib, short and long inputs, in one piece or fed."""

from __future__ import annotations

import hashlib

from accy.hashing import BIG, sha256


def test_digests_equal_hashlibs_on_both_sides_of_the_size_switch():
    for n in (0, 1, 63, BIG, BIG + 1, 3 * BIG):
        data = bytes(range(256)) * (n // 256) + b"x" * (n % 256)
        assert sha256(data).hexdigest() == hashlib.sha256(data).hexdigest()
        assert sha256(memoryview(data)).digest() == hashlib.sha256(data).digest()
    h = sha256()
    h.update(b"key|")
    h.update(b"x" * (2 * BIG))
    assert h.hexdigest() == hashlib.sha256(b"key|" + b"x" * (2 * BIG)).hexdigest()
