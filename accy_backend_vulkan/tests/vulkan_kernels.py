"""Kernel-IR test kernels shared by the target and driver tests."""

from __future__ import annotations

from accy.kernel import (
    Assign,
    AtomicRMW,
    Barrier,
    BufferParam,
    Cast,
    For,
    If,
    Kernel,
    Let,
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
    """``y[i] = a * x[i] + b`` for ``i < n``: scalars of three dtypes, bool flag."""
    x = Load("x", GID, dtype)
    a = Cast(Var("a", "f64"), dtype)
    value = binary("add", binary("mul", a, x), Cast(Var("b", "i32"), dtype))
    neg = unary("neg", value)
    return Kernel(
        "scale",
        buffers=(BufferParam("y", dtype, "write"), BufferParam("x", dtype)),
        scalars=(
            ScalarParam("n", "i32"),
            ScalarParam("a", "f64"),
            ScalarParam("b", "i32"),
            ScalarParam("flip", "bool"),
        ),
        body=(
            If(
                binary("lt", GID, N),
                (If(Var("flip", "bool"), (Store("y", GID, neg),), (Store("y", GID, value),)),),
            ),
        ),
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
    """Per-work-group sum of ``x`` through shared memory and barriers (a loop with barriers)."""
    steps = []
    s = ws // 2
    body = []
    while s >= 1:
        steps.append(s)
        s //= 2
    for s in steps:
        body += [
            If(
                binary("lt", LID, const(s, "i32")),
                (
                    SharedStore(
                        "acc",
                        LID,
                        binary(
                            "add",
                            SharedLoad("acc", LID, "f32"),
                            SharedLoad("acc", binary("add", LID, const(s, "i32")), "f32"),
                        ),
                    ),
                ),
            ),
            Barrier(),
        ]
    return Kernel(
        "tree_sum",
        buffers=(BufferParam("out", "f32", "write"), BufferParam("x", "f32")),
        scalars=(),
        body=(
            SharedStore("acc", LID, Load("x", GID, "f32")),
            Barrier(),
            *body,
            If(
                binary("eq", LID, const(0, "i32")),
                (Store("out", ThreadId("group"), SharedLoad("acc", const(0, "i32"), "f32")),),
            ),
        ),
        workgroup_size=ws,
        shared=(SharedArray("acc", "f32", ws),),
    )


def histogram(dtype: str = "i32") -> Kernel:
    """``atomic add`` of 1 into ``hist[x[i] % bins]``, plus atomic max of ``x`` (ints)."""
    one = const(1, dtype)
    bin_ = binary("rem", Load("x", GID, "i32"), const(8, "i32"))
    body = [AtomicRMW("add", "hist", bin_, one)]
    if dtype == "i32":
        body.append(AtomicRMW("max", "top", const(0, "i32"), Load("x", GID, "i32")))
    return Kernel(
        f"histogram_{dtype}",
        buffers=(
            BufferParam("hist", dtype, "readwrite"),
            BufferParam("top", "i32", "readwrite"),
            BufferParam("x", "i32"),
        ),
        scalars=(ScalarParam("n", "i32"),),
        body=(If(binary("lt", GID, N), tuple(body)),),
        workgroup_size=64,
    )


def group_ids() -> Kernel:
    """``out[g] = group id * 1000 + num_groups`` written by local id 0 (tests big grids)."""
    value = binary(
        "add", binary("mul", ThreadId("group"), const(1000, "i32")), ThreadId("num_groups")
    )
    return Kernel(
        "group_ids",
        buffers=(BufferParam("out", "i32", "write"),),
        scalars=(),
        body=(If(binary("eq", LID, const(0, "i32")), (Store("out", ThreadId("group"), value),)),),
        workgroup_size=1,
    )


def loop_bool() -> Kernel:
    """``mask[i] = sum(x[0..i]) > t`` with a ``For`` loop, a bool buffer and a u32 count."""
    total = Var("total", "f32")
    return Kernel(
        "loop_bool",
        buffers=(BufferParam("mask", "bool", "write"), BufferParam("x", "f32")),
        scalars=(ScalarParam("n", "i32"), ScalarParam("t", "f32")),
        body=(
            If(
                binary("lt", GID, N),
                (
                    Let("total", const(0.0, "f32")),
                    For(
                        "j",
                        const(0, "i32"),
                        binary("add", GID, const(1, "i32")),
                        const(1, "i32"),
                        (Assign("total", binary("add", total, Load("x", Var("j", "i32"), "f32"))),),
                    ),
                    Store("mask", GID, binary("gt", total, Var("t", "f32"))),
                ),
            ),
        ),
        workgroup_size=16,
    )
