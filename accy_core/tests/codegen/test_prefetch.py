"""``kb.prefetch``: a uniform cache hint, issued once per work-group between the CPU's
work-item loops (whose vectorization it must not stop), checked like a barrier, a no-op in
the interpreter."""

from __future__ import annotations

import llvmlite.binding as llvm
import numpy as np
import pytest
from accy.codegen import BaseTarget, CodegenRequest, compile_llvm, emit_llvm_ir
from accy.errors import VerifyError
from accy.kernel import KernelBuilder, interpret


class HostTarget(BaseTarget):
    name = "host-test"
    triple = llvm.get_process_triple()


def prefetching_kernel(ahead: int = 16):
    """``y[g*8 + lid] = 2 * sum_p x[p*64 + g*8 + lid]``, prefetching ``ahead`` rows ahead
    (past the end of ``x`` in the last rows: a hint may point anywhere)."""
    kb = KernelBuilder("pf", 8)
    y, x = kb.buffer("y", "f32", "write"), kb.buffer("x", "f32", "read")
    n = kb.scalar("n", "i32")
    g, lid = kb.group_id(), kb.local_id()
    acc = kb.let("acc", kb.const(0.0, "f32"))
    with kb.for_("p", 0, n) as p:
        kb.prefetch(x, (p + ahead) * 64 + g * 8)
        kb.assign(acc, acc + x[p * 64 + g * 8 + lid] * 2.0)
        kb.barrier()
    kb.store(y, g * 8 + lid, acc)
    return kb.build()


def test_prefetch_is_issued_once_per_group_and_the_work_item_loop_still_vectorizes():
    k = prefetching_kernel()
    assert "prefetch x[" in k.to_text()
    text = emit_llvm_ir(k, HostTarget())
    assert text.count("call void @llvm.prefetch.p0") == 1
    assert "getelementptr float, ptr" in text  # not inbounds: a hint may point past the end
    opt = compile_llvm(CodegenRequest(text, HostTarget.triple, outputs=("llvm-opt",)))
    body = opt["llvm-opt"].decode()
    assert "@llvm.prefetch" in body
    assert " x float>" in body  # the lane loop is vectorized (a call inside it was not)


def test_prefetch_has_no_effect_on_results():
    x = np.arange(64 * 5, dtype=np.float32)
    y = np.zeros(64, np.float32)
    interpret(prefetching_kernel(), 8, [y, x], [5])
    np.testing.assert_allclose(y, 2 * x.reshape(5, 64).sum(0))


def _bad(where: str):
    kb = KernelBuilder("bad_pf", 8)
    x = kb.buffer("x", "f32", "read")
    y = kb.buffer("y", "f32", "write")
    lid = kb.local_id()
    if where == "index":
        kb.prefetch(x, lid)
    elif where == "flow":
        with kb.if_(x[lid] > 0.0):
            kb.prefetch(x, 0)
    elif where == "dtype":
        kb.prefetch(x, kb.const(1.0, "f32"))
    kb.store(y, lid, x[lid])
    return kb


@pytest.mark.parametrize("where, match", [("index", "prefetch index or control flow"),
                                          ("flow", "prefetch index or control flow"),
                                          ("dtype", "index must be")])
def test_prefetch_must_be_uniform_with_an_integer_index(where, match):
    with pytest.raises(VerifyError, match=match):
        _bad(where).build()
