"""Outline each ``dispatch.region`` into a portable kernel-IR :class:`accy.kernel.Kernel`.

Buffers follow the fixed launch order: ``out0`` (write), then ``in0..inN`` (read). An input
the memory plan updates in place is not a separate buffer: the kernel reads it through
``out0`` (then ``readwrite``), so no two bound buffers ever alias. Shapes are static, so
element counts are constants in the kernel and there are no scalars.

- ``map`` regions: one work-item per output element, ``gid < n`` guard.
- ``reduce`` regions (``reduce.*``, ``dot_general``): one work-item per output element with a
  serial loop over the reduced elements, or — when there are few outputs and many reduced
  elements — one work-group per output element: strided per-item partial results, then a
  shared-memory tree reduction with barriers.

Kernels are stored in ``module.attrs["kernels"]`` (name → Kernel); each region records
``kernel``, ``workgroup_size`` and ``groups`` (work-groups to launch).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

from accy.errors import VerifyError
from accy.ir import Module, Operation, Value
from accy.ir.ops.linalg import dot_general_dims
from accy.kernel import (
    Assign,
    Barrier,
    Binary,
    BufferParam,
    Cast,
    Const,
    Expr,
    For,
    If,
    Kernel,
    Let,
    Load,
    Select,
    SharedArray,
    SharedLoad,
    SharedStore,
    Stmt,
    Store,
    ThreadId,
    Var,
)
from accy.passes.base import Pass, PassContext
from accy.passes.fusion import ROOT_OPS
from accy.passes.kernel_exprs import (
    IDX,
    Index,
    check_size,
    combine,
    const_i,
    elementwise_expr,
    identity,
)

__all__ = ["OutlineKernelsPass", "outline_region"]

MAP_WORKGROUP = 256
TREE_WORKGROUP = 256
TREE_MAX_OUTPUTS = 64
TREE_MIN_REDUCED = 1024


def _pow2_at_least(n: int) -> int:
    return 1 << max(0, (n - 1).bit_length())


class _Emitter:
    def __init__(self, region: Operation) -> None:
        self.region = region
        self.block = region.regions[0].block
        self.args = {a: k for k, a in enumerate(self.block.args)}
        self.in_place = frozenset(region.attrs.get("in_place", ()))
        self.stmts: list[Stmt] = []
        self.memo: dict[object, Expr] = {}
        self.n = 0

    def fresh(self, base: str) -> str:
        self.n += 1
        return f"{base}{self.n}"

    def let(self, base: str, e: Expr) -> Var:
        name = self.fresh(base)
        self.stmts.append(Let(name, e))
        return Var(name, e.dtype)

    def nested(self, body) -> list[Stmt]:
        """Run ``body()`` collecting statements into a fresh list with its own memo scope."""
        saved, saved_memo = self.stmts, self.memo
        self.stmts, self.memo = [], dict(saved_memo)
        body()
        out = self.stmts
        self.stmts, self.memo = saved, saved_memo
        return out

    def value_at(self, v: Value, idx: Index) -> Expr:
        key = (id(v), idx.key())
        hit = self.memo.get(key)
        if hit is not None:
            return hit
        e = self._compute(v, idx)
        if not isinstance(e, (Const, Var)):
            e = self.let("v", e)
        self.memo[key] = e
        return e

    def buffer_of(self, k: int) -> str:
        """Buffer name of region input ``k`` (``out0`` when the output reuses it in place)."""
        return "out0" if k in self.in_place else f"in{k}"

    def _compute(self, v: Value, idx: Index) -> Expr:
        if v in self.args:
            return Load(self.buffer_of(self.args[v]), idx.linear, v.type.dtype.value)
        op = v.defining_op
        name, src = op.name, op.operands
        if name == "tensor.constant":
            x = op.attrs["value"].reshape(-1)[0].item()
            return Const(x, v.type.dtype.value)
        if name == "tensor.broadcast_to":
            return self.value_at(src[0], idx.broadcast_from(src[0].type.shape))
        if name == "tensor.transpose":
            return self.value_at(src[0], idx.transpose_from(src[0].type.shape, op.attrs["perm"]))
        if name == "tensor.reshape":
            return self.value_at(src[0], idx.reshape_from(src[0].type.shape))
        if name == "tensor.slice":
            return self.value_at(src[0], idx.slice_from(src[0].type.shape, op.attrs["start"]))
        if name == "tensor.pad":
            return self._pad(v, op, idx)
        if name == "tensor.iota":
            c = idx.comps[op.attrs["dim"] % len(idx.shape)]
            dtype = v.type.dtype.value
            return c if dtype == IDX else Cast(c, dtype)
        args = [self.value_at(x, idx) for x in src]
        return elementwise_expr(name, args, op.attrs)

    def _pad(self, v: Value, op: Operation, idx: Index) -> Expr:
        src = op.operands[0]
        inner, inside = idx.pad_from(src.type.shape, op.attrs["low"])
        dtype = v.type.dtype.value
        raw = op.attrs["value"]
        fill = Const(bool(raw) if dtype == "bool" else raw if dtype in ("f32", "f64") else int(raw),
                     dtype)
        if src.type.num_elements == 0:
            return fill
        loaded = self.value_at(src, inner)
        return loaded if inside is None else Select(inside, loaded, fill, dtype)

    def yielded(self) -> Value:
        return self.block.ops[-1].operands[0]


def _emit_map(em: _Emitter, out: Value) -> tuple[list[Stmt], int, int]:
    n = out.type.num_elements
    ws = min(MAP_WORKGROUP, max(32, _pow2_at_least(n)))
    gid = Var("gid", IDX)

    def body() -> None:
        val = em.value_at(out, Index(out.type.shape, linear=gid))
        em.stmts.append(Store("out0", gid, val))

    guarded = em.nested(body)
    stmts: list[Stmt] = [Let("gid", ThreadId("global"))]
    stmts += guarded if n % ws == 0 else [If(_lt(gid, n), tuple(guarded))]
    return stmts, ws, math.ceil(n / ws)


def _lt(a: Expr, n: int) -> Expr:
    return Binary("lt", a, const_i(n), "bool")


def _reduce_parts(root: Operation):
    """(kind, reduced extents, fn(out comps, red comps) -> list[(operand, Index)])."""
    if root.name == "linalg.dot_general":
        lhs, rhs = root.operands
        lc, rc, lb, rb = dot_general_dims(root.attrs)
        lfree = [d for d in range(lhs.type.rank) if d not in lc and d not in lb]
        rfree = [d for d in range(rhs.type.rank) if d not in rc and d not in rb]
        red = [lhs.type.shape[d] for d in lc]

        def operand_index(t, contr, batch, free, offset, oc, rc_):
            comps = []
            for d in range(t.rank):
                if d in batch:
                    comps.append(oc[batch.index(d)])
                elif d in contr:
                    comps.append(rc_[contr.index(d)])
                else:
                    comps.append(oc[offset + free.index(d)])
            return Index(t.shape, comps=comps)

        def indices(oc, rcs):
            return [
                (lhs, operand_index(lhs.type, lc, lb, lfree, len(lb), oc, rcs)),
                (rhs, operand_index(rhs.type, rc, rb, rfree, len(lb) + len(lfree), oc, rcs)),
            ]

        return "sum", red, indices
    x = root.operands[0]
    axes = [a % x.type.rank for a in root.attrs["axes"]]
    keep = bool(root.attrs.get("keepdims", False))
    kept = [d for d in range(x.type.rank) if d not in axes]

    def indices(oc, rcs):
        comps = []
        for d in range(x.type.rank):
            if d in axes:
                comps.append(rcs[axes.index(d)])
            else:
                comps.append(oc[d] if keep else oc[kept.index(d)])
        return [(x, Index(x.type.shape, comps=comps))]

    return root.name.split(".")[1], [x.type.shape[a] for a in axes], indices


def _reduce_value(em: _Emitter, root: Operation, indices, oc, rcs) -> Expr:
    vals = [em.value_at(v, ix) for v, ix in indices(oc, rcs)]
    if root.name == "linalg.dot_general":
        return Binary("mul", vals[0], vals[1], vals[0].dtype)
    return vals[0]


def _emit_reduce(em: _Emitter, out: Value) -> tuple[list[Stmt], int, int, tuple]:
    root = out.defining_op
    kind, red, indices = _reduce_parts(root)
    n_out, n_red = out.type.num_elements, math.prod(red)
    check_size(n_red, f"'{root.name}' reduced extent")
    dtype = out.type.dtype.value
    tree = n_out <= TREE_MAX_OUTPUTS and n_red >= TREE_MIN_REDUCED
    o = Var("o", IDX)
    out_idx = Index(out.type.shape, linear=o)
    r = Var("r", IDX)
    red_idx = Index(tuple(red), linear=r)
    acc = Var("acc", dtype)

    def step() -> None:
        x = _reduce_value(em, root, indices, out_idx.comps, red_idx.comps)
        em.stmts.append(Assign("acc", combine(kind, acc, x)))

    if not tree:
        ws = min(MAP_WORKGROUP, max(32, _pow2_at_least(n_out)))
        loop = For("r", const_i(0), const_i(n_red), const_i(1), tuple(em.nested(step)))
        inner = [Let("acc", identity(kind, dtype)), loop, Store("out0", o, acc)]
        stmts: list[Stmt] = [Let("o", ThreadId("global"))]
        stmts += inner if n_out % ws == 0 else [If(_lt(o, n_out), tuple(inner))]
        return stmts, ws, math.ceil(n_out / ws), ()
    ws = TREE_WORKGROUP
    lid = Var("lid", IDX)
    loop = For("r", lid, const_i(n_red), const_i(ws), tuple(em.nested(step)))
    stmts = [Let("o", ThreadId("group")), Let("lid", ThreadId("local")),
             Let("acc", identity(kind, dtype)), loop, SharedStore("partial", lid, acc), Barrier()]
    s = ws // 2
    while s >= 1:
        a = SharedLoad("partial", lid, dtype)
        b = SharedLoad("partial", Binary("add", lid, const_i(s), IDX), dtype)
        stmts += [If(_lt(lid, s), (SharedStore("partial", lid, combine(kind, a, b)),)), Barrier()]
        s //= 2
    first = Binary("eq", lid, const_i(0), "bool")
    stmts.append(If(first, (Store("out0", o, SharedLoad("partial", const_i(0), dtype)),)))
    return stmts, ws, n_out, (SharedArray("partial", dtype, ws),)


def outline_region(region: Operation, name: str) -> tuple[Kernel, int]:
    """Kernel IR for one region and the number of work-groups to launch."""
    em = _Emitter(region)
    out = em.yielded()
    check_size(out.type.num_elements, f"'{region.name}' result {out.type}")
    shared: tuple = ()
    root = out.defining_op
    is_reduce = root is not None and root.name in ROOT_OPS
    for op in em.block.ops:
        if op.name in ROOT_OPS and op is not root:
            raise VerifyError(
                f"'dispatch.region' op: '{op.name}' must be the value a region yields; "
                "run the dispatch stage (fusion) instead of writing regions by hand",
                op="dispatch.region",
            )
    if is_reduce:
        body, ws, groups, shared = _emit_reduce(em, out)
    else:
        body, ws, groups = _emit_map(em, out)
    access = "readwrite" if em.in_place else "write"
    buffers = [BufferParam("out0", out.type.dtype.value, access)]
    buffers += [BufferParam(f"in{k}", a.type.dtype.value, "read")
                for k, a in enumerate(em.block.args) if k not in em.in_place]
    kernel = Kernel(name=name, buffers=tuple(buffers), scalars=(), body=tuple(body),
                    workgroup_size=ws, shared=shared)
    return kernel, groups


@dataclass(frozen=True)
class OutlineKernelsPass(Pass):
    """Turn every dispatch region into a kernel-IR kernel with its launch geometry."""

    name: ClassVar[str] = "outline-kernels"
    summary: ClassVar[str] = "outline dispatch regions into kernel IR with launch geometry"

    def run(self, module: Module, ctx: PassContext) -> bool:
        kernels = dict(module.attrs.get("kernels", {}))
        for fn in module.functions:
            k = 0
            for op in fn.body.ops:
                if op.name != "dispatch.region":
                    continue
                name = f"{fn.name}_k{k}_{op.attrs.get('kind', 'map')}"
                k += 1
                kernel, groups = outline_region(op, name)
                kernels[name] = kernel
                op.attrs.update(kernel=name, workgroup_size=kernel.workgroup_size, groups=groups)
        module.attrs["kernels"] = kernels
        return True
