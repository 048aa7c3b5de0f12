"""Kernel-IR test kernels of the OpenCL target and runtime tests, and a runner."""

from __future__ import annotations

import numpy as np
from accy.backend import Geometry
from accy.kernel import (
    AtomicRMW,
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

GID = ThreadId("global")
LID = ThreadId("local")
N = Var("n", "i32")


def scale(dtype: str = "f32") -> Kernel:
    """``y[i] = ±(a * x[i] + b)`` for ``i < n``: scalars of four dtypes including bool."""
    x = Load("x", GID, dtype)
    value = binary("add", binary("mul", Cast(Var("a", "f64"), dtype), x),
                   Cast(Var("b", "i32"), dtype))
    return Kernel(
        f"scale_{dtype}",
        buffers=(BufferParam("y", dtype, "write"), BufferParam("x", dtype)),
        scalars=(ScalarParam("n", "i32"), ScalarParam("a", "f64"), ScalarParam("b", "i32"),
                 ScalarParam("flip", "bool")),
        body=(If(binary("lt", GID, N), (
            If(Var("flip", "bool"), (Store("y", GID, unary("neg", value)),),
               (Store("y", GID, value),)),)),),
        workgroup_size=64,
    )


def unary_f(op: str, dtype: str = "f32") -> Kernel:
    """``y[i] = op(x[i])``."""
    return Kernel(
        f"u_{op}_{dtype}",
        buffers=(BufferParam("y", dtype, "write"), BufferParam("x", dtype)),
        scalars=(ScalarParam("n", "i32"),),
        body=(If(binary("lt", GID, N), (Store("y", GID, unary(op, Load("x", GID, dtype))),)),),
        workgroup_size=32,
    )


def tree_sum(ws: int = 64) -> Kernel:
    """Per-work-group sum of ``x`` through ``__local`` memory and barriers."""
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


def histogram(dtype: str = "i32", op: str = "add") -> Kernel:
    """Atomic ``op`` of ``x[i]`` (as ``dtype``) into ``hist[x[i] % 8]``."""
    bin_ = binary("rem", Load("x", GID, "i32"), const(8, "i32"))
    value = Cast(Load("x", GID, "i32"), dtype)
    return Kernel(
        f"histogram_{op}_{dtype}",
        buffers=(BufferParam("hist", dtype, "readwrite"), BufferParam("x", "i32")),
        scalars=(ScalarParam("n", "i32"),),
        body=(If(binary("lt", GID, N), (AtomicRMW(op, "hist", bin_, value),)),),
        workgroup_size=64,
    )


def group_ids() -> Kernel:
    """``out[g] = group id * 1000 + num_groups`` written by local id 0."""
    value = binary("add", binary("mul", ThreadId("group"), const(1000, "i32")),
                   ThreadId("num_groups"))
    return Kernel("group.ids", buffers=(BufferParam("out", "i32", "write"),), scalars=(),
                  body=(If(binary("eq", LID, const(0, "i32")),
                           (Store("out", ThreadId("group"), value),)),),
                  workgroup_size=4)


def run(backend, kernel, groups, arrays, scalars, options=None):
    """Compile, load and launch ``kernel``; return the arrays read back."""
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
