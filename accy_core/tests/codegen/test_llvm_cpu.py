"""LLVM IR text for a CPU-mode target parses and verifies; barrier kernels are split."""

from __future__ import annotations

import llvmlite.binding as llvm
import pytest
from accy.codegen import BaseTarget, CodegenRequest, compile_llvm, compile_llvm_many, emit_llvm_ir
from accy.codegen.worker import shutdown_worker
from accy.errors import CodegenError
from accy.kernel import KernelBuilder, call, where
from accy.testing.kernels import loop_tree_sum


class HostTarget(BaseTarget):
    name = "host-test"
    triple = llvm.get_process_triple()


def parse(text: str) -> None:
    module = llvm.parse_assembly(text)
    module.verify()


def every_op_kernel():
    kb = KernelBuilder("ops", 32)
    outs = {d: kb.buffer(f"o_{d}", d, "write") for d in ("f32", "f64", "i32", "i64", "u32", "bool")}
    x = kb.buffer("x", "f32", "read")
    n = kb.scalar("n", "i32")
    flag = kb.scalar("flag", "bool")
    i = kb.global_id()
    with kb.if_((i < n) & flag):
        v = kb.let("v", x[i])
        for op in ("exp", "log", "sqrt", "rsqrt", "tanh", "sin", "cos", "floor", "exp2"):
            kb.assign(v, call(op, v))
        kb.assign(v, call("pow", v, 2.0) + call("max", v, 1.0) - call("min", v, 0.5))
        kb.store(outs["f32"], i, v)
        kb.store(outs["f64"], i, v.cast("f64") / 3.0)
        iv = kb.let("iv", v.cast("i32"))
        kb.store(outs["i32"], i, (iv // 3) % 5 << 2 >> 1 ^ call("abs", -iv))
        kb.store(outs["i64"], i, iv.cast("i64") * 7)
        u = kb.let("u", iv.cast("u32"))
        kb.store(outs["u32"], i, call("mulhi", u, u) + (u >> 3) + u // 7)
        kb.store(outs["bool"], i, where(v > 1.0, ~(u == 0), iv.cast("bool")))
    return kb.build()


def test_every_op_parses_and_verifies():
    parse(emit_llvm_ir(every_op_kernel(), HostTarget()))


def test_entry_signature_and_noalias():
    text = emit_llvm_ir(every_op_kernel(), HostTarget())
    assert "define void @ops(ptr %bufs, ptr %scalars, i32 %wg_begin, i32 %wg_end, i32 %nwg)" in text
    assert "ptr noalias %b0" in text and "alwaysinline" in text


def barrier_kernel():
    """The f32 tree sum of 32 items with its 5 barrier steps in a loop, named ``reduce``."""
    return loop_tree_sum(32)


def test_barrier_kernel_is_split_into_work_item_loops():
    text = emit_llvm_ir(barrier_kernel(), HostTarget())
    parse(text)
    assert text.count("phi i32 [0, %lid.pre") == 5  # 5 regions: store, let, if, assign, out
    assert "alloca [32 x float]" in text  # shared array per work-group
    assert "alloca [32 x i32]" in text  # `s` lives across regions: one slot per work-item


def test_worker_reports_bad_ir_and_survives_a_crash():
    with pytest.raises(CodegenError, match="error:") as info:
        compile_llvm(CodegenRequest("define void @f() { ret i32 0 }", HostTarget.triple))
    assert "ret i32 0" in info.value.ir_excerpt
    with pytest.raises(CodegenError, match="LLVM ERROR"):
        compile_llvm(CodegenRequest("", HostTarget.triple, abort_for_testing=True))
    text = emit_llvm_ir(barrier_kernel(), HostTarget())
    out = compile_llvm(CodegenRequest(text, HostTarget.triple, outputs=("obj", "llvm-opt")))
    assert out["obj"] and b"define void @reduce" in out["llvm-opt"]
    shutdown_worker()


def test_parallel_compiles_equal_serial_and_survive_a_crash():
    texts = [emit_llvm_ir(barrier_kernel(), HostTarget()).replace("@reduce", f"@reduce{i}")
             for i in range(3)]
    requests = [CodegenRequest(t, HostTarget.triple, outputs=("llvm-opt",)) for t in texts]
    serial = compile_llvm_many(requests, workers=1)
    parallel = compile_llvm_many(requests, workers=2)
    assert parallel == serial and b"define void @reduce2" in parallel[2]["llvm-opt"]
    crash = CodegenRequest("", HostTarget.triple, abort_for_testing=True)
    with pytest.raises(CodegenError, match="LLVM ERROR") as info:
        compile_llvm_many([requests[0], crash, requests[1]], workers=2)
    assert info.value.crashed
    with pytest.raises(CodegenError, match="error:"):  # an IR error reaches the caller too
        compile_llvm_many([requests[0], CodegenRequest("define void @f() { ret i32 0 }",
                                                       HostTarget.triple)], workers=2)
    assert compile_llvm_many(requests, workers=2) == serial  # the crashed worker was replaced
    shutdown_worker()


def test_elementwise_kernel_vectorizes_at_o3():
    kb = KernelBuilder("axpy", 256)
    y, x = kb.buffer("y", "f32", "write"), kb.buffer("x", "f32", "read")
    n = kb.scalar("n", "i32")
    i = kb.global_id()
    with kb.if_(i < n):
        kb.store(y, i, x[i] * 2.0 + 1.0)
    text = emit_llvm_ir(kb.build(), HostTarget())
    request = CodegenRequest(
        text,
        HostTarget.triple,
        llvm.get_host_cpu_name(),
        llvm.get_host_cpu_features().flatten(),
        3,
        ("llvm-opt",),
    )
    optimized = compile_llvm(request)["llvm-opt"].decode()
    assert any(f"<{w} x float>" in optimized for w in (4, 8, 16))


def test_constant_tail_guard_bounds_the_local_id_loop():
    """``if (gid < 1000)`` with 256-item work-groups: the guard is the loop's bound
    (``min(256, 1000 - base)``), not a branch in its body, and the loop still vectorizes."""
    kb = KernelBuilder("tail", 256)
    y, x = kb.buffer("y", "f32", "write"), kb.buffer("x", "f32", "read")
    i = kb.let("gid", kb.global_id())  # the outliner's map kernels: let gid; if (gid < n)
    with kb.if_(i < 1000):
        kb.store(y, i, x[i] * 2.0 + 1.0)
    text = emit_llvm_ir(kb.build(), HostTarget())
    parse(text)
    assert "sub nsw i32 1000, %wg.base" in text and "@llvm.smin.i32" in text
    assert "icmp slt i32 %v" not in text.split("lid.body")[1].split("lid.latch")[0]
    request = CodegenRequest(text, HostTarget.triple, llvm.get_host_cpu_name(),
                             llvm.get_host_cpu_features().flatten(), 3, ("llvm-opt",))
    optimized = compile_llvm(request)["llvm-opt"].decode()
    assert any(f"<{w} x float>" in optimized for w in (4, 8, 16))
    assert "llvm.masked.store" not in optimized
