"""Evaluate a tensor IR function with numpy through each op's ``reference``.

This is the oracle the pass tests (and backends) compare against: ``evaluate(module,
"f", [x, y])`` runs ``@f`` op by op on host arrays. ``dispatch.region`` ops evaluate their
block with the region arguments bound to the operands. Every result is checked against
the op's declared type, so a reference that disagrees with its own op is caught here.
``loop.for`` / ``loop.while`` run their body functions (of the same module) in a Python
loop.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from accy.errors import InputError, InternalError, UnsupportedError
from accy.ir import Block, Module, Operation, Value, get_op_def
from accy.ir.ops.loop import LOOP_OPS

__all__ = ["evaluate"]


def _check_input(i: int, x: object, v: Value) -> np.ndarray:
    arr = np.asarray(x)
    want = v.type
    if arr.shape != want.shape:
        raise InputError(
            f"input #{i}: expected shape {list(want.shape)}, got {list(arr.shape)}; "
            "reshape the array first"
        )
    if arr.dtype != want.dtype.numpy:
        if not np.can_cast(arr.dtype, want.dtype.numpy, "same_kind"):
            raise InputError(
                f"input #{i}: expected dtype {want.dtype}, got {arr.dtype}; cast first"
            )
        arr = arr.astype(want.dtype.numpy)
    return arr


def _run_loop(module: Module, op: Operation, args: list[np.ndarray]) -> list[np.ndarray]:
    """``loop.for`` / ``loop.while``: run the body function until done (see accy.ir.ops.loop)."""
    n = op.attrs["carried"]
    carried, invariant = list(args[:n]), list(args[n:])
    body = module.function(op.attrs["body"])
    if op.name == "loop.for":
        iv_carried = bool(body.attrs.get("iv_carried"))
        for i in range(op.attrs["lower"], op.attrs["upper"], op.attrs.get("step", 1)):
            out = _run_block(body.body, [np.asarray(i, np.int32), *carried, *invariant], module)
            carried = out[:n] if iv_carried else out
        return carried
    cond = module.function(op.attrs["cond"])
    while bool(_run_block(cond.body, [*carried, *invariant], module)[0]):
        carried = _run_block(body.body, [*carried, *invariant], module)
    return carried


def _run_op(op: Operation, args: list[np.ndarray], module: Module | None) -> list[np.ndarray]:
    if op.name == "dispatch.region":
        return _run_block(op.regions[0].block, args, module)
    if op.name in LOOP_OPS:
        if module is None:
            raise InternalError("a loop op evaluated without its module; please report")
        return _run_loop(module, op, args)
    reference = get_op_def(op.name).reference
    if reference is None:
        raise UnsupportedError(
            f"'{op.name}' op has no reference semantics to evaluate", feature=op.name
        )
    with np.errstate(all="ignore"):
        results = [np.asarray(r) for r in reference(args, dict(op.attrs))]
    if len(results) != len(op.results):
        raise InternalError(
            f"reference of '{op.name}' returned {len(results)} arrays for "
            f"{len(op.results)} results; please report"
        )
    for arr, r in zip(results, op.results, strict=True):
        if arr.shape != r.type.shape or arr.dtype != r.type.dtype.numpy:
            raise InternalError(
                f"reference of '{op.name}' returned {arr.dtype}{list(arr.shape)}, the op "
                f"declares {r.type}; please report"
            )
    return results


def _run_block(block: Block, args: Sequence[np.ndarray],
               module: Module | None = None) -> list[np.ndarray]:
    env: dict[Value, np.ndarray] = dict(zip(block.args, args, strict=True))
    for op in block.ops:
        operands = [env[v] for v in op.operands]
        if op.name in ("func.return", "dispatch.yield"):
            return operands
        for v, arr in zip(op.results, _run_op(op, operands, module), strict=True):
            env[v] = arr
    raise InternalError("block ends without a terminator; please report")


def evaluate(module: Module, fn_name: str, inputs: Sequence[object]) -> list[np.ndarray]:
    """Run function ``@fn_name`` of ``module`` on host arrays; return its results.

    Args:
        module: a verified tensor IR module.
        fn_name: the function to run.
        inputs: one array per parameter, of the parameter's shape; a dtype of the same
            kind (float for float, ...) is cast.

    Raises:
        IRError: no such function.
        InputError: wrong number of inputs, or a wrong shape or dtype kind.
        UnsupportedError: an op without reference semantics.
    """
    fn = module.function(fn_name)
    if len(inputs) != len(fn.params):
        raise InputError(f"@{fn_name} takes {len(fn.params)} inputs, got {len(inputs)}")
    args = [_check_input(i, x, p) for i, (x, p) in enumerate(zip(inputs, fn.params, strict=True))]
    return _run_block(fn.body, args, module)
