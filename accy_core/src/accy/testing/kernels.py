"""Kernel-IR test kernels that every backend's tests build, and a helper that runs one.

The kernels cover what a backend's target and runtime must get right: scalar parameters of
several dtypes (``scale``), math functions (``unary_f``), shared memory and barriers
(``tree_sum``; ``loop_tree_sum``, its barriers in a loop), group ids on large grids
(``group_ids``) and a uniform prefetch hint (``prefetching``). Each takes the name and sizes
its callers' tests expect, so the core, CPU, Vulkan, OpenCL and CUDA tests share one
definition. :func:`run_kernel` compiles, loads and
launches a kernel on a backend and returns its buffers read back.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from accy.backend import Geometry
from accy.kernel import (
    Barrier,
    BufferParam,
    Cast,
    If,
    Kernel,
    Load,
    ScalarParam,
    SharedArray,
    SharedLoad,
    SharedStore,
    Store,
    ThreadId,
    Var,
)
from accy.kernel.ir import binary, const, unary

__all__ = ["GID", "LID", "N", "group_ids", "loop_tree_sum", "prefetching", "run_kernel",
           "scale", "tree_sum", "unary_f"]

GID = ThreadId("global")
LID = ThreadId("local")
N = Var("n", "i32")


def scale(dtype: str = "f32", name: str | None = None) -> Kernel:
    """``y[i] = ±(a * x[i] + b)`` for ``i < n``; scalars ``n`` i32, ``a`` f64, ``b`` i32 and
    ``flip`` bool (negates); ``y`` and ``x`` of ``dtype``, work-groups of 64. Named ``name``,
    ``scale_<dtype>`` by default."""
    x = Load("x", GID, dtype)
    value = binary("add", binary("mul", Cast(Var("a", "f64"), dtype), x),
                   Cast(Var("b", "i32"), dtype))
    return Kernel(
        name or f"scale_{dtype}",
        buffers=(BufferParam("y", dtype, "write"), BufferParam("x", dtype)),
        scalars=(ScalarParam("n", "i32"), ScalarParam("a", "f64"), ScalarParam("b", "i32"),
                 ScalarParam("flip", "bool")),
        body=(If(binary("lt", GID, N), (
            If(Var("flip", "bool"), (Store("y", GID, unary("neg", value)),),
               (Store("y", GID, value),)),)),),
        workgroup_size=64,
    )


def unary_f(op: str, dtype: str = "f32") -> Kernel:
    """``y[i] = op(x[i])`` for ``i < n`` (``op`` a kernel-IR unary op), work-groups of 32."""
    return Kernel(
        f"u_{op}_{dtype}",
        buffers=(BufferParam("y", dtype, "write"), BufferParam("x", dtype)),
        scalars=(ScalarParam("n", "i32"),),
        body=(If(binary("lt", GID, N), (Store("y", GID, unary(op, Load("x", GID, dtype))),)),),
        workgroup_size=32,
    )


def tree_sum(ws: int = 64) -> Kernel:
    """``out[g]`` = the sum of work-group ``g``'s ``ws`` elements of f32 ``x``: a tree in
    shared memory with a barrier after each of its ``log2(ws)`` steps (``ws`` a power of 2)."""
    body: list = [SharedStore("acc", LID, Load("x", GID, "f32")), Barrier()]
    s = ws // 2
    while s >= 1:
        other = SharedLoad("acc", binary("add", LID, const(s, "i32")), "f32")
        body += [If(binary("lt", LID, const(s, "i32")),
                    (SharedStore("acc", LID, binary("add", SharedLoad("acc", LID, "f32"),
                                                    other)),)),
                 Barrier()]
        s //= 2
    body.append(If(binary("eq", LID, const(0, "i32")),
                   (Store("out", ThreadId("group"), SharedLoad("acc", const(0, "i32"), "f32")),)))
    return Kernel("tree_sum", buffers=(BufferParam("out", "f32", "write"), BufferParam("x", "f32")),
                  scalars=(), body=tuple(body), workgroup_size=ws,
                  shared=(SharedArray("acc", "f32", ws),))


def loop_tree_sum(ws: int = 32, dtype: str = "f32", name: str = "reduce",
                  guarded: bool = False) -> Kernel:
    """``out[g]`` = the sum of work-group ``g``'s ``ws`` elements of ``x`` (``dtype``), built
    with the DSL: a tree in the shared array ``sh`` whose ``log2(ws)`` steps are a ``For``
    loop with a barrier in it (``ws`` a power of 2). ``guarded``: an i32 scalar ``n``, and
    items ``>= n`` add 0 (float ``dtype`` only)."""
    from accy.kernel.dsl import KernelBuilder, where

    kb = KernelBuilder(name, ws)
    out, x = kb.buffer("out", dtype, "write"), kb.buffer("x", dtype, "read")
    n = kb.scalar("n", "i32") if guarded else None
    sh = kb.shared("sh", dtype, ws)
    lid, gid = kb.local_id(), kb.global_id()
    kb.shared_store(sh, lid, where(gid < n, x[gid % n], 0.0) if guarded else x[gid])
    kb.barrier()
    s = kb.let("s", ws // 2)
    with kb.for_("step", 0, ws.bit_length() - 1):  # uniform loop containing a barrier
        with kb.if_(lid < s):
            kb.shared_store(sh, lid, sh[lid] + sh[lid + s])
        kb.barrier()
        kb.assign(s, s >> 1)
    with kb.if_(lid == 0):
        kb.store(out, kb.group_id(), sh[0])
    return kb.build()


def group_ids(name: str = "group_ids", workgroup_size: int = 1) -> Kernel:
    """``out[g] = g * 1000 + num_groups`` (i32), written by local id 0 of each work-group."""
    value = binary("add", binary("mul", ThreadId("group"), const(1000, "i32")),
                   ThreadId("num_groups"))
    return Kernel(name, buffers=(BufferParam("out", "i32", "write"),), scalars=(),
                  body=(If(binary("eq", LID, const(0, "i32")),
                           (Store("out", ThreadId("group"), value),)),),
                  workgroup_size=workgroup_size)


def prefetching() -> Kernel:
    """``pf``: ``y[g] = sum over p < n of x[p * 64 + local id]`` (f32, work-groups of 64) with
    a uniform ``kb.prefetch`` of ``x`` 16 rows ahead in the loop (GPU targets drop it)."""
    from accy.kernel.dsl import KernelBuilder

    kb = KernelBuilder("pf", 64)
    y, x = kb.buffer("y", "f32", "write"), kb.buffer("x", "f32", "read")
    n = kb.scalar("n", "i32")
    acc = kb.let("acc", kb.const(0.0, "f32"))
    with kb.for_("p", 0, n) as p:
        kb.prefetch(x, (p + 16) * 64)
        kb.assign(acc, acc + x[p * 64 + kb.local_id()])
    kb.store(y, kb.global_id(), acc)
    return kb.build()


def run_kernel(backend: Any, kernel: Kernel, groups: int, arrays: Sequence[np.ndarray],
               scalars: Sequence[Any], options: Any = None) -> list[np.ndarray]:
    """Compile (with ``options``), load and launch ``kernel`` on ``backend`` over ``groups``
    work-groups; one device buffer per array of ``arrays`` (in the kernel's buffer order,
    written first), ``scalars`` in the order of ``kernel.scalars``. Returns new arrays with
    the buffers' contents after the launch (dtypes and shapes of ``arrays``); the buffers
    and the loaded kernel are released. Errors are the backend's (``accy.errors``)."""
    loaded = backend.load(backend.compile(kernel, options))
    buffers = []
    for a in arrays:
        buf = backend.allocate(a.nbytes)
        backend.write(buf, a)
        buffers.append(buf)
    pairs = [(p.dtype, v) for p, v in zip(kernel.scalars, scalars, strict=True)]
    backend.launch(loaded, Geometry(groups, kernel.workgroup_size), buffers, pairs)
    out = [backend.read(b, np.empty_like(a)) for b, a in zip(buffers, arrays, strict=True)]
    for b in buffers:
        backend.free(b)
    backend.destroy(loaded)
    return out
