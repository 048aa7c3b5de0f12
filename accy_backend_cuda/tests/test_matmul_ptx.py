"""Every matmul family kernel (each variant, dtype and a fused epilogue) assembles with
ptxas for sm_80 and sm_90 (compile-only backend, no GPU needed)."""

from __future__ import annotations

import pytest
from accy.kernel import Binary, Const, Load
from accy_backend_cuda.toolchain import check_ptx, find_ptxas

pytestmark = pytest.mark.skipif(find_ptxas() is None, reason="ptxas not found on PATH/CUDA_HOME")


def _bias_relu(dtype):
    from accy_kernels.matmul_problem import Epilogue

    def fn(acc, b, i, j):
        v = Binary("add", acc, Load("bias", j, dtype), dtype)
        return [], Binary("max", v, Const(0, dtype), dtype)

    return Epilogue(f"bias_relu_{dtype}", dtype, (("bias", dtype),), fn)


def _kernels(dtype, ep):
    from accy_kernels import matmul_blocked as mb
    from accy_kernels import matmul_gemv as mg
    from accy_kernels import matmul_tiled as mt

    yield mb.pack_kernel(dtype, 6)
    yield mb.blocked_kernel(dtype, 6, 8, 2, 4, ep)
    for c in mt.candidates():
        o = dict(c.options)
        yield mt.tiled_kernel(dtype, o["tx"], o["ty"], o["rm"], o["rn"], o["bk"], ep)
    yield mg.rows_kernel(dtype, 64, 4, False, ep)
    yield mg.cols_kernel(dtype, 64, 4, True, True, ep)
    yield mg.cols_kernel(dtype, 64, 4, False, False, ep)


@pytest.mark.parametrize("dtype", ["f32", "f64", "i32"])
@pytest.mark.parametrize("epilogue", [False, True])
def test_matmul_kernels_assemble(dtype, epilogue):
    from accy_backend_cuda.plugin import open_compile_only
    from accy_kernels.matmul_problem import NO_EPILOGUE

    be = open_compile_only(90)
    ep = _bias_relu(dtype) if epilogue else NO_EPILOGUE
    for kernel in _kernels(dtype, ep):
        for sm in (80, 90):
            check_ptx(be.emit(kernel, "ptx", target=f"sm_{sm}").decode(), sm, kernel.name)
