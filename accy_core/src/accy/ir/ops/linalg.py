"""``linalg`` ops: ``dot_general`` and ``einsum``.

``dot_general`` follows XLA's DotGeneral: batch dimensions pair up (``lhs_batch[i]`` with
``rhs_batch[i]``), contracting dimensions are summed over, and the result dimensions are
the batch dimensions, then the remaining lhs dimensions, then the remaining rhs
dimensions, each in operand order::

    %2 = linalg.dot_general %0, %1 {lhs_contracting = [1], rhs_contracting = [0],
           lhs_batch = [], rhs_batch = []} : (f32[2,3], f32[3,2]) -> f32[2,2]

``einsum`` takes any number of operands and a subscript string in numpy's notation
(letters only, no ellipsis, no index repeated inside one operand)::

    %3 = linalg.einsum %0, %1, %2 {spec = "bqd,bkd,bkv->bqv"} : (...) -> f32[2,16,16]

The tensor stage lowers einsum into ``dot_general``/``reduce``/``transpose`` with a planned
contraction order.
"""

from __future__ import annotations

import numpy as np

from accy.ir.ops.common import NUMERIC, fail, require_dtype
from accy.ir.ops.registry import OpDef, register_op
from accy.ir.types import TensorType

_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


def dot_general_dims(attrs) -> tuple[tuple[int, ...], ...]:
    return tuple(
        tuple(int(x) for x in attrs.get(k, ()))
        for k in ("lhs_contracting", "rhs_contracting", "lhs_batch", "rhs_batch")
    )


def _check_dims(name: str, dims: tuple[int, ...], rank: int, side: str) -> None:
    for d in dims:
        if not 0 <= d < rank:
            raise fail(
                "linalg.dot_general", f"{side} {name} dimension {d} out of range for rank {rank}"
            )
    if len(set(dims)) != len(dims):
        raise fail("linalg.dot_general", f"{side} {name} dimensions {list(dims)} repeat")


def _dot_infer(types, attrs):
    op = "linalg.dot_general"
    lhs, rhs = types
    if lhs.dtype != rhs.dtype:
        raise fail(
            op, f"operand dtypes must match, got {lhs.dtype} and {rhs.dtype}; cast one first"
        )
    require_dtype(op, lhs, NUMERIC)
    lc, rc, lb, rb = dot_general_dims(attrs)
    if len(lc) != len(rc):
        raise fail(
            op, f"lhs_contracting {list(lc)} and rhs_contracting {list(rc)} differ in length"
        )
    if len(lb) != len(rb):
        raise fail(op, f"lhs_batch {list(lb)} and rhs_batch {list(rb)} differ in length")
    _check_dims("contracting/batch", lc + lb, lhs.rank, "lhs")
    _check_dims("contracting/batch", rc + rb, rhs.rank, "rhs")
    for a, b, what in [(x, y, "contracting") for x, y in zip(lc, rc, strict=True)] + [
        (x, y, "batch") for x, y in zip(lb, rb, strict=True)
    ]:
        if lhs.shape[a] != rhs.shape[b]:
            raise fail(
                op,
                f"{what} dimension extents differ: lhs dim {a} is {lhs.shape[a]}, "
                f"rhs dim {b} is {rhs.shape[b]} ({lhs} vs {rhs})",
            )
    lfree = [d for d in range(lhs.rank) if d not in lc and d not in lb]
    rfree = [d for d in range(rhs.rank) if d not in rc and d not in rb]
    shape = (
        [lhs.shape[d] for d in lb] + [lhs.shape[d] for d in lfree] + [rhs.shape[d] for d in rfree]
    )
    return [TensorType(lhs.dtype, tuple(shape))]


def dot_general_spec(lhs_rank: int, rhs_rank: int, attrs) -> str:
    """The einsum spec equivalent to a dot_general (used by the reference)."""
    lc, rc, lb, rb = dot_general_dims(attrs)
    letters = iter(_LETTERS)
    ls = [""] * lhs_rank
    rs = [""] * rhs_rank
    for a, b in zip(lb, rb, strict=True):
        ls[a] = rs[b] = next(letters)
    for a, b in zip(lc, rc, strict=True):
        ls[a] = rs[b] = next(letters)
    for i in range(lhs_rank):
        ls[i] = ls[i] or next(letters)
    for i in range(rhs_rank):
        rs[i] = rs[i] or next(letters)
    out = [ls[a] for a in lb]
    out += [ls[i] for i in range(lhs_rank) if i not in lc and i not in lb]
    out += [rs[i] for i in range(rhs_rank) if i not in rc and i not in rb]
    return f"{''.join(ls)},{''.join(rs)}->{''.join(out)}"


def _dot_ref(xs, attrs):
    spec = dot_general_spec(xs[0].ndim, xs[1].ndim, attrs)
    return [np.asarray(np.einsum(spec, xs[0], xs[1])).astype(xs[0].dtype)]


def parse_einsum(spec: str, n_operands: int) -> tuple[list[str], str]:
    """Split ``"ab,bc->ac"`` into input subscripts and the output subscript.

    Without ``->`` the output is every index that appears once, in alphabetical order
    (numpy's implicit mode).

    Raises:
        VerifyError: malformed spec, wrong operand count, ellipsis, repeated index.
    """
    op = "linalg.einsum"
    s = spec.replace(" ", "")
    if "." in s:
        raise fail(op, f"ellipsis in spec {spec!r} is not supported; write every index")
    lhs, arrow, out = s.partition("->")
    ins = lhs.split(",")  # "->" is one scalar operand, as in numpy
    if len(ins) != n_operands:
        raise fail(op, f"spec {spec!r} names {len(ins)} operands, got {n_operands}")
    for sub in ins + [out]:
        for ch in sub:
            if ch not in _LETTERS:
                raise fail(op, f"invalid index character {ch!r} in spec {spec!r}")
        if len(set(sub)) != len(sub):
            raise fail(
                op, f"repeated index in {sub!r} of spec {spec!r} (diagonals are not supported)"
            )
    if not arrow:
        counts: dict[str, int] = {}
        for sub in ins:
            for ch in sub:
                counts[ch] = counts.get(ch, 0) + 1
        out = "".join(sorted(c for c, n in counts.items() if n == 1))
    for ch in out:
        if not any(ch in sub for sub in ins):
            raise fail(op, f"output index {ch!r} of spec {spec!r} appears in no operand")
    return ins, out


def _einsum_infer(types, attrs):
    op = "linalg.einsum"
    if not types:
        raise fail(op, "expected at least 1 operand, got 0")
    for t in types[1:]:
        if t.dtype != types[0].dtype:
            raise fail(
                op, f"operand dtypes must match, got {types[0].dtype} and {t.dtype}; cast first"
            )
    require_dtype(op, types[0], NUMERIC)
    ins, out = parse_einsum(attrs["spec"], len(types))
    extents: dict[str, int] = {}
    for i, (sub, t) in enumerate(zip(ins, types, strict=True)):
        if len(sub) != t.rank:
            raise fail(
                op, f"operand #{i} has rank {t.rank} but subscript {sub!r} has {len(sub)} indices"
            )
        for ch, ext in zip(sub, t.shape, strict=True):
            if extents.setdefault(ch, ext) != ext:
                raise fail(
                    op, f"index {ch!r} has extent {extents[ch]} and {ext} (operand #{i} {t})"
                )
    return [TensorType(types[0].dtype, tuple(extents[c] for c in out))]


def _einsum_ref(xs, attrs):
    return [np.asarray(np.einsum(attrs["spec"], *xs)).astype(xs[0].dtype)]


register_op(
    OpDef(
        "linalg.dot_general",
        2,
        _dot_infer,
        _dot_ref,
        attrs={"lhs_contracting": "ints", "rhs_contracting": "ints"},
        optional_attrs={"lhs_batch": ("ints", ()), "rhs_batch": ("ints", ())},
        summary="XLA DotGeneral: batch + contracting dimensions",
    )
)
register_op(
    OpDef(
        "linalg.einsum",
        None,
        _einsum_infer,
        _einsum_ref,
        attrs={"spec": "str"},
        summary="numpy einsum (no ellipsis, no diagonals)",
    )
)

__all__ = ["dot_general_dims", "dot_general_spec", "parse_einsum"]
