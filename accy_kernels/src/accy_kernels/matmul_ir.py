"""IR lowering of ``dispatch.region {kind = "contract"}``: a ``dot_general`` and its fused
elementwise epilogue as the ``matmul`` family's launches (:mod:`accy.passes.contraction`
describes the call; :mod:`accy.families.lowering` calls :func:`contract_plan`)."""

from __future__ import annotations

from typing import Any

from accy.errors import CapabilityError, UnsupportedError

from accy_kernels.matmul_plan import plan_matmul
from accy_kernels.matmul_problem import NO_EPILOGUE, Epilogue, MatmulProblem
from accy_kernels.tuning_keys import bucket

__all__ = ["contract_plan", "tuned_choice"]


def tuned_choice(backend: Any, prob: MatmulProblem, slots: tuple,
                 epilogue: Epilogue = NO_EPILOGUE, extra=()) -> tuple[str | None, Any]:
    """The tuning cache's ``(variant, candidate)`` for ``prob`` on the compile's target
    (:meth:`accy.families.lowering.TargetBackend.family_variant` / ``family_candidate``,
    key ``dtype``, ``m{b(m)}-n{b(n)}-k{b(k)}-b{b(batch)}`` as direct calls); ``(None,
    None)`` where nothing is cached or the cached choice cannot run this problem here (a dry
    run of the plan on ``slots``, the ``(a, b, out)`` slots, tells)."""
    look_v = getattr(backend, "family_variant", None)
    look_c = getattr(backend, "family_candidate", None)
    if look_v is None or look_c is None:
        return None, None
    key = (prob.dtype, f"m{bucket(prob.m)}-n{bucket(prob.n)}-k{bucket(prob.k)}-"
                       f"b{bucket(prob.batch)}")
    var = look_v("matmul", *key)
    if var is None:
        return None, None
    cand = look_c("matmul", var.name, *key)
    explicit = getattr(backend, "explicit_choice", lambda f: None)("matmul")
    if explicit is not None:  # asked for: its errors are the caller's
        return var.name, cand
    try:  # a dry run: the cached choice must fit this problem and target
        from accy.families.lowering import LibraryPlan

        plan_matmul(LibraryPlan("matmul.tuned"), backend, prob, *slots, variant=var.name,
                    candidate=cand, epilogue=epilogue, extra=extra)
    except (CapabilityError, UnsupportedError):
        return None, None
    return var.name, cand


def contract_plan(plan, backend, call, inputs, output) -> None:
    """Append the launches of one contract region to ``plan``.

    ``call``: the region's :class:`accy.passes.contraction.ContractCall`; ``inputs``: the
    region inputs' slots; ``output``: the result slot. Variant and tile: the tuning cache's
    winner for the problem's key where the compile reads it (:func:`tuned_choice`), else the
    default heuristic for the target (:mod:`accy_kernels.matmul_plan`).
    """
    prob = MatmulProblem(call.dtype, call.batch, call.m, call.n, call.k, call.a_strides,
                         call.b_strides)
    if call.epilogue is None:
        ep = NO_EPILOGUE
    else:
        bufs = tuple((f"in{k}", inputs[k].dtype) for k in call.epilogue_inputs)
        ep = Epilogue(call.epilogue_key, call.out_dtype, bufs, call.epilogue)
    extra = [inputs[k] for k in call.epilogue_inputs]
    slots = (inputs[call.a_input], inputs[call.b_input], output)
    variant, cand = tuned_choice(backend, prob, slots, ep, extra)
    plan_matmul(plan, backend, prob, *slots, variant=variant, candidate=cand, epilogue=ep,
                extra=extra)
