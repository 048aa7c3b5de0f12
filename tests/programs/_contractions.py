"""Helpers shared by the contraction program tests (``test_matmul_programs``,
``test_window_contractions``): the kinds of a compiled program's dispatch regions, and a
jitted function compiled uncached for one backend."""

from __future__ import annotations

import accy


def region_kinds(exe) -> list[str]:
    """The ``kind`` of every ``dispatch.region`` of ``exe``'s module, in program order
    (``"contract"`` for a product that runs as the matmul family)."""
    return [op.attrs.get("kind") for op in exe.module.walk() if op.name == "dispatch.region"]


def compile_jit(fn, args, backend):
    """``accy.compile`` of ``accy.jit(fn)`` lowered for ``args`` on ``backend``, bypassing the
    cache (each test compiles what it inspects)."""
    return accy.compile(accy.jit(fn).lower(*args), backend=backend, use_cache=False)
