"""Executables running in different threads share one Vulkan backend safely."""

from __future__ import annotations

import threading

import accy
import numpy as np
import pytest


def _program(n: int, scale: float):
    b = accy.Builder()
    t = b.tensor("f32", (n,))
    fb = b.begin_function(f"scale_{n}", params=[t])
    fb.return_(fb.mul(fb.add(fb.param(0), 1.0), scale))
    fb.finish()
    return b.finish()


def test_concurrent_executables_on_one_backend():
    from accy.plugins import probe_backend

    ok, why = probe_backend("vulkan")
    if not ok:
        pytest.skip(f"vulkan unavailable: {why}")
    exes = [accy.compile(_program(64 + 32 * i, float(i + 1)), backend="vulkan") for i in range(6)]
    errors: list[str] = []

    def work(i: int) -> None:
        x = np.arange(64 + 32 * i, dtype=np.float32)
        for _ in range(25):
            (out,) = exes[i](x)
            if not np.allclose(out, (x + 1) * (i + 1)):
                errors.append(f"executable {i} gave a wrong result")

    threads = [threading.Thread(target=work, args=(i,)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not any(t.is_alive() for t in threads), "a thread hung"
    assert not errors
