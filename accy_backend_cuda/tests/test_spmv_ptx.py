"""The SpMV kernels the CUDA backend runs (CSR whole rows and windowed, the CSR structure
check, SELL) and the layout hash assemble with ptxas for sm_80 and sm_90 (compile-only
backend, no GPU needed)."""

from __future__ import annotations

import pytest
from accy_backend_cuda.toolchain import check_ptx, find_ptxas

pytestmark = pytest.mark.skipif(find_ptxas() is None, reason="ptxas not found on PATH/CUDA_HOME")


def test_spmv_kernels_assemble(dtype="f64"):  # f32 differs in types only
    from accy_backend_cuda.plugin import open_compile_only
    from accy_kernels.layout_hash import hash_kernel
    from accy_kernels.spmv_csr_check import check_kernel
    from accy_kernels.spmv_csr_scalar import csr_scalar_kernel
    from accy_kernels.spmv_sell import sell_kernel

    be = open_compile_only(90)
    kernels = [csr_scalar_kernel(dtype, 64, windowed=False), csr_scalar_kernel(dtype, 64),
               check_kernel(), sell_kernel(dtype, 32, 64), hash_kernel()]
    for kernel in kernels:
        for sm in (80, 90):
            check_ptx(be.emit(kernel, "ptx", target=f"sm_{sm}").decode(), sm, kernel.name)
