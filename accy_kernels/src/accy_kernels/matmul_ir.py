"""IR lowering of ``dispatch.region {kind = "contract"}``: a ``dot_general`` and its fused
elementwise epilogue as the ``matmul`` family's launches (:mod:`accy.passes.contraction`
describes the call; :mod:`accy.families.lowering` calls :func:`contract_plan`)."""

from __future__ import annotations

from accy_kernels.matmul_plan import plan_matmul
from accy_kernels.matmul_problem import NO_EPILOGUE, Epilogue, MatmulProblem

__all__ = ["contract_plan"]


def contract_plan(plan, backend, call, inputs, output) -> None:
    """Append the launches of one contract region to ``plan``.

    ``call``: the region's :class:`accy.passes.contraction.ContractCall`; ``inputs``: the
    region inputs' slots; ``output``: the result slot. Variant and tile come from the default
    heuristic for the target (:mod:`accy_kernels.matmul_plan`).
    """
    prob = MatmulProblem(call.dtype, call.batch, call.m, call.n, call.k, call.a_strides,
                         call.b_strides)
    if call.epilogue is None:
        ep = NO_EPILOGUE
    else:
        bufs = tuple((f"in{k}", inputs[k].dtype) for k in call.epilogue_inputs)
        ep = Epilogue(call.epilogue_key, call.out_dtype, bufs, call.epilogue)
    extra = [inputs[k] for k in call.epilogue_inputs]
    plan_matmul(plan, backend, prob, inputs[call.a_input], inputs[call.b_input], output,
                epilogue=ep, extra=extra)
