"""Contractions that run as the ``matmul`` kernel family (``dispatch.region {kind =
"contract"}``): which ``dot_general`` ops qualify, and the call the family plans.

A ``dot_general`` qualifies when it does enough work to beat the generic one-work-item-per-
output loop (:func:`worthwhile`) and each operand is a region input read through index
maps the family can express as strides: a chain of ``tensor.transpose`` ops over one
buffer, whose batch, free and contracted dimensions each merge into one strided axis (a
row-major ``(batch, m, k)`` view with arbitrary strides). The elementwise ops that consume
its result (bias add, activation, scale, residual add, cast) form the region's epilogue:
they are evaluated per output element inside the family kernel, after the accumulation
(:class:`ContractCall.epilogue`), so ``relu(x @ W + b)`` is one kernel and one pass.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

from accy.ir import Operation, Value
from accy.ir.ops.linalg import dot_general_dims
from accy.kernel import expr_to_text
from accy.kernel import ir as kir

__all__ = ["MIN_WORK", "ContractCall", "contract_call", "dot_sizes", "eligible_dot",
           "is_epilogue_op", "operand_chain_ok", "operand_view", "worthwhile"]

#: multiply-adds below which the fused per-output loop is as fast as a family launch
MIN_WORK = 1 << 15


def dot_sizes(op: Operation) -> tuple[int, int, int, int]:
    """``(batch, m, n, k)`` of a ``dot_general`` (products of its merged dimensions)."""
    lhs, rhs = (v.type.shape for v in op.operands)
    lc, rc, lb, rb = dot_general_dims(op.attrs)
    lfree = [d for d in range(len(lhs)) if d not in lc and d not in lb]
    rfree = [d for d in range(len(rhs)) if d not in rc and d not in rb]
    return (math.prod(lhs[d] for d in lb), math.prod(lhs[d] for d in lfree),
            math.prod(rhs[d] for d in rfree), math.prod(lhs[d] for d in lc))


def worthwhile(batch: int, m: int, n: int, k: int) -> bool:
    """Whether the family beats the generic loop: at least :data:`MIN_WORK` multiply-adds
    and a contracted extent of at least 8 (outer products and tiny sums stay fused)."""
    return batch * m * n * k >= MIN_WORK and k >= 8 and m * n * batch >= 8


def is_epilogue_op(op: Operation, v: Value) -> bool:
    """Whether ``op``, consuming ``v`` once, may continue a contraction's epilogue: an
    elementwise op (``arith.*``, ``math.*``) of ``v``'s shape, or a reshape (the output
    element at each linear position stays the product's element there)."""
    if op.operands.count(v) != 1:
        return False
    if op.name == "tensor.reshape":
        return True
    return (op.name.split(".")[0] in ("arith", "math") and op.op_def.has("elementwise")
            and op.results[0].type.shape == v.type.shape)


def operand_chain_ok(v: Value, is_base: Callable[[Value], bool]) -> bool:
    """``v`` is ``is_base`` itself, or transposes of reshapes of such a value (a reshape of a
    buffer is a row-major view of it; a transpose permutes strides)."""
    reshaped = False
    while not is_base(v):
        op = v.defining_op
        if op is None or op.name not in ("tensor.transpose", "tensor.reshape"):
            return False
        if op.name == "tensor.transpose" and reshaped:
            return False
        reshaped = reshaped or op.name == "tensor.reshape"
        v = op.operands[0]
    return True


def eligible_dot(op: Operation, is_base: Callable[[Value], bool]) -> bool:
    """A ``dot_general`` the family runs: worthwhile, operands strided views of buffers."""
    if op.name != "linalg.dot_general" or not worthwhile(*dot_sizes(op)):
        return False
    if op.results[0].type.dtype.value not in ("f32", "f64", "i32"):
        return False
    return all(operand_chain_ok(v, is_base) and _view(v, op, k, is_base) is not None
               for k, v in enumerate(op.operands))


def operand_view(v: Value, op: Operation, side: int, is_base: Callable[[Value], bool]) -> bool:
    """Whether operand ``side`` of ``op`` (a transpose/reshape chain over an ``is_base``
    value, :func:`operand_chain_ok`) merges into one strided batch, row and contracted axis."""
    return _view(v, op, side, is_base) is not None


def _row_major(shape: tuple[int, ...]) -> list[int]:
    out, s = [], 1
    for d in reversed(shape):
        out.append(s)
        s *= d
    return out[::-1]


def _base_view(v: Value, is_base: Callable[[Value], bool]) -> tuple[Value, list[int]]:
    """The buffer under a transpose chain and the element strides of ``v``'s axes."""
    perms: list[tuple[int, ...]] = []
    while not is_base(v) and v.defining_op.name == "tensor.transpose":
        perms.append(tuple(v.defining_op.attrs["perm"]))
        v = v.defining_op.operands[0]
    strides = _row_major(v.type.shape)
    while not is_base(v):  # reshapes of the buffer: row-major in the top shape
        v = v.defining_op.operands[0]
    for perm in reversed(perms):
        strides = [strides[p] for p in perm]
    return v, strides


def _merge(dims: list[int], shape: tuple[int, ...], strides: list[int]) -> int | None:
    """Stride of ``dims`` merged into one axis (row-major order), or None."""
    real = [d for d in dims if shape[d] != 1]
    for a, b in zip(real, real[1:], strict=False):
        if strides[a] != strides[b] * shape[b]:
            return None
    return strides[real[-1]] if real else 0


def _view(v: Value, op: Operation, side: int, is_base) -> tuple[Value, tuple[int, int, int]] | None:
    """``(buffer, (batch stride, row stride, contracted stride))`` of operand ``side``
    (rows: ``m`` of the lhs, ``n`` of the rhs)."""
    lc, rc, lb, rb = dot_general_dims(op.attrs)
    contr, batch = (lc, lb) if side == 0 else (rc, rb)
    shape = v.type.shape
    free = [d for d in range(len(shape)) if d not in contr and d not in batch]
    base, strides = _base_view(v, is_base)
    merged = [_merge(list(ds), shape, strides) for ds in (batch, free, contr)]
    if None in merged:
        return None
    return base, tuple(merged)  # type: ignore[return-value]


@dataclass(frozen=True)
class ContractCall:
    """What the ``matmul`` family's ``contract_plan`` gets for one contract region.

    ``C[b, i, j] = epilogue(sum_p A[b, i, p] * B[b, p, j])`` with ``A`` = region input
    ``a_input`` read at ``b*sa_b + i*sa_i + p*sa_p`` (``a_strides``), ``B`` likewise
    (``b_strides`` = ``(sb_b, sb_p, sb_j)``), ``C`` row-major ``(batch, m, n)`` of
    ``out_dtype``. ``epilogue(acc, b, i, j) -> (statements, value)`` gives the kernel IR of
    the stored value; it loads region inputs ``epilogue_inputs`` as buffers ``in<k>``.
    """

    dtype: str
    out_dtype: str
    batch: int
    m: int
    n: int
    k: int
    a_input: int
    a_strides: tuple[int, int, int]
    b_input: int
    b_strides: tuple[int, int, int]
    epilogue_key: str = ""
    epilogue_inputs: tuple[int, ...] = ()
    epilogue: Callable | None = field(default=None, compare=False)


def _loads(x: object, out: set[str]) -> None:
    if isinstance(x, kir.Load):
        out.add(x.buffer)
    for name in getattr(x, "__dataclass_fields__", {}):
        child = getattr(x, name)
        if isinstance(child, tuple):
            for c in child:
                _loads(c, out)
        elif hasattr(child, "__dataclass_fields__"):
            _loads(child, out)


def contract_call(region: Operation) -> ContractCall:
    """The :class:`ContractCall` of a ``dispatch.region {kind = "contract"}``."""
    from accy.passes.kernel_exprs import IDX, Index
    from accy.passes.outline_kernels import _Emitter

    block = region.regions[0].block
    args = {a: k for k, a in enumerate(block.args)}
    dot = next(op for op in block.ops if op.name == "linalg.dot_general")
    out = block.ops[-1].operands[0]
    batch, m, n, k = dot_sizes(dot)
    (a_base, sa), (b_base, sb) = (_view(v, dot, s, args.__contains__)
                                  for s, v in enumerate(dot.operands))
    acc_t, dres = dot.results[0].type, dot.results[0]
    em = _Emitter(region)
    nd_b = len(dot_general_dims(dot.attrs)[2])

    def epilogue(acc, b, i, j):
        if out is dres:
            return [], acc
        lin = kir.Binary("add", kir.Binary("mul", kir.Binary(
            "add", kir.Binary("mul", b, kir.Const(m, IDX), IDX), i, IDX), kir.Const(n, IDX), IDX),
            j, IDX)
        comps = None
        if acc_t.rank == nd_b + 2 and nd_b <= 1:
            comps = ((b,) if nd_b else ()) + (i, j)
        idx = Index(acc_t.shape, comps=comps, linear=lin)
        oidx = idx if out.type.shape == acc_t.shape else Index(out.type.shape, linear=lin)
        result: list = []

        def body() -> None:
            em.memo[(id(dres), idx.key())] = acc
            result.append(em.value_at(out, oidx))

        stmts = em.nested(body)
        return stmts, result[0]

    dt = acc_t.dtype.value
    probe = [kir.Var(f"mm_probe_{c}", t) for c, t in (("acc", dt), ("b", IDX), ("i", IDX),
                                                       ("j", IDX))]
    stmts, value = epilogue(*probe)
    used: set[str] = set()
    for s in (*stmts, value):
        _loads(s, used)
    key = "" if out is dres else "\n".join(
        [kir.Kernel("e", (), (), tuple(stmts), 1).to_text(), expr_to_text(value)])
    inputs = tuple(sorted(int(u[2:]) for u in used if u.startswith("in")))
    return ContractCall(dt, out.type.dtype.value, batch, m, n, k, args[a_base], sa,
                        args[b_base], (sb[0], sb[2], sb[1]), key, inputs,
                        None if out is dres else epilogue)
