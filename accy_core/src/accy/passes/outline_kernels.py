"""Outline each ``dispatch.region`` into a portable kernel-IR :class:`accy.kernel.Kernel`.

Buffers follow the fixed launch order: ``out0`` (write), then ``in0..inN`` (read). An input
the memory plan updates in place is not a separate buffer: the kernel reads it through
``out0`` (then ``readwrite``), so no two bound buffers ever alias. Shapes are static, so
element counts are constants in the kernel and there are no scalars.

- ``map`` regions: one work-item per output element, ``gid < n`` guard.
- ``reduce`` regions (``reduce.*``, ``dot_general``): on host (CPU) targets, ``lanes``
  kernels (:mod:`accy.passes.reduce_lanes`) where the reduced axes are contiguous; else
  one work-item per output element with a serial loop over the reduced elements, or — when
  there are few outputs and many reduced elements — one work-group per output element:
  strided per-item partial results, then a shared-memory tree reduction with barriers.

Kernels are stored in ``module.attrs["kernels"]`` (name → Kernel); each region records
``kernel``, ``workgroup_size`` and ``groups`` (work-groups to launch), and ``candidates``:
its launch candidates (:mod:`accy.tuning.candidates`, the default first). When
``ctx.options["launch_choices"]`` is a callable ``(name, default kernel, region, candidates)
-> (candidate, source) | None`` (the runtime passes one reading the tuning cache and explicit
choices), a non-default pick is outlined instead and recorded as ``candidate`` and
``candidate_source``. On a target with ``max_loop_iterations`` (lavapipe) only candidates
whose kernel stays under it are kept (:mod:`accy.passes.loop_budget`; source
``loop-budget`` when the default had to change), or the region is refused.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import partial
from typing import Any, ClassVar

from accy.errors import VerifyError
from accy.ir import Module, Operation, Value
from accy.ir.ops.dispatch import FAMILY_KINDS, VIEW_KIND
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
from accy.passes.dynamic_exprs import dynamic_slice_expr, dynamic_update_expr
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
from accy.passes.loop_budget import fit_loop_budget
from accy.passes.reduce_lanes import column_width, emit_lanes, lanes_view
from accy.passes.windows import Window, emit_window, find_window, rows_worth_it
from accy.tuning.candidates import LaunchCandidate, default_candidate, region_candidates

__all__ = ["OutlineKernelsPass", "candidates_for", "outline_region", "region_extents",
           "structural_fingerprint"]

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
            flat = op.attrs["value"].reshape(-1)
            # an empty constant fuses as a "scalar" too; no index into it is ever evaluated
            x = flat[0].item() if flat.size else flat.dtype.type(0).item()
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
        if name == "tensor.gather":  # kernel-library=disabled: index arithmetic
            return self._gather(op, idx)
        if name == "tensor.dynamic_slice":
            return dynamic_slice_expr(self, op, idx)
        if name == "tensor.dynamic_update_slice":
            return dynamic_update_expr(self, op, idx)
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

    def _gather(self, op: Operation, idx: Index) -> Expr:
        """``src[..., idx(indices[j...]), ...]``; the index is normalized by ``mode`` and
        clamped into range (``raise`` indices were checked on the host before launch)."""
        src, ind = op.operands
        axis = op.attrs["axis"] % src.type.rank
        k = ind.type.rank
        comps = idx.comps
        raw = self.value_at(ind, Index(ind.type.shape, comps=comps[axis:axis + k]))
        n = src.type.shape[axis]
        i = raw if raw.dtype == IDX else Cast(raw, IDX)
        if op.attrs.get("mode", "raise") == "wrap":
            i = Binary("rem", Binary("add", Binary("rem", i, const_i(n), IDX), const_i(n), IDX),
                       const_i(n), IDX)
        elif op.attrs.get("mode", "raise") == "raise":
            i = Select(Binary("lt", i, const_i(0), "bool"), Binary("add", i, const_i(n), IDX),
                       i, IDX)
        i = Binary("min", Binary("max", i, const_i(0), IDX), const_i(max(n - 1, 0)), IDX)
        i = self.let("gi", i)
        return self.value_at(src, Index(src.type.shape,
                                        comps=comps[:axis] + (i,) + comps[axis + k:]))

    def yielded(self) -> Value:
        return self.block.ops[-1].operands[0]



def _kernel_name(fn_name: str, k: int, kind: str, taken: dict) -> str:
    """``{function}_k{k}_{kind}`` as a C/PTX/SPIR-V identifier (loop bodies are named
    ``body.iter``; ptxas rejects the dot), made unique among ``taken``."""
    base = re.sub(r"[^A-Za-z0-9_]", "_", f"{fn_name}_k{k}_{kind}")
    name, n = base, 1
    while name in taken:
        name, n = f"{base}_{n}", n + 1
    return name

def _emit_map(em: _Emitter, out: Value, cand: LaunchCandidate) -> tuple[list[Stmt], int, int]:
    n = out.type.num_elements
    ws, ipt = cand.workgroup_size, cand.items_per_thread
    gid = Var("gid", IDX)

    def body(at: Expr) -> Callable[[], None]:
        def emit() -> None:
            val = em.value_at(out, Index(out.type.shape, linear=at))
            em.stmts.append(Store("out0", at, val))
        return emit

    if ipt > 1:
        groups = math.ceil(n / (ws * ipt))
        return _strided(em, gid, n, groups * ws, ipt, body), ws, groups
    guarded = em.nested(body(gid))
    stmts: list[Stmt] = [Let("gid", ThreadId("global"))]
    stmts += guarded if n % ws == 0 else [If(_lt(gid, n), tuple(guarded))]
    return stmts, ws, math.ceil(n / ws)


def _strided(em: _Emitter, gid: Var, n: int, threads: int, ipt: int, body) -> list[Stmt]:
    """``ipt`` elements per work-item, grid-stride: element ``gid + j·threads``, guarded."""
    e = Var("e", IDX)
    inner = em.nested(body(e))
    loop_body = (Let("e", Binary("add", gid, Binary("mul", Var("j", IDX), const_i(threads), IDX),
                                 IDX)), If(_lt(e, n), tuple(inner)))
    return [Let("gid", ThreadId("global")),
            For("j", const_i(0), const_i(ipt), const_i(1), loop_body)]


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


def _emit_reduce(em: _Emitter, out: Value,
                 cand: LaunchCandidate) -> tuple[list[Stmt], int, int, tuple]:
    root = out.defining_op
    kind, red, indices = _reduce_parts(root)
    n_out, n_red = out.type.num_elements, math.prod(red)
    check_size(n_red, f"'{root.name}' reduced extent")
    dtype = out.type.dtype.value
    if cand.variant == "lanes" and lanes_view(root) is not None:
        return emit_lanes(em, root, cand.workgroup_size, cand.items_per_thread, n_out)
    tree = cand.variant == "tree"
    o = Var("o", IDX)
    out_idx = Index(out.type.shape, linear=o)
    r = Var("r", IDX)
    red_idx = Index(tuple(red), linear=r)
    acc = Var("acc", dtype)

    def step() -> None:
        x = _reduce_value(em, root, indices, out_idx.comps, red_idx.comps)
        em.stmts.append(Assign("acc", combine(kind, acc, x)))

    if not tree:
        ws, ipt = cand.workgroup_size, cand.items_per_thread
        if ipt > 1:
            groups = math.ceil(n_out / (ws * ipt))

            def per_output(at: Expr) -> Callable[[], None]:
                def emit() -> None:
                    em.stmts.append(Let("o", at))
                    em.stmts += _serial(em, step, kind, dtype, n_red, o, acc)
                return emit

            return _strided(em, Var("gid", IDX), n_out, groups * ws, ipt, per_output), ws, \
                groups, ()
        inner = _serial(em, step, kind, dtype, n_red, o, acc)
        stmts: list[Stmt] = [Let("o", ThreadId("global"))]
        stmts += inner if n_out % ws == 0 else [If(_lt(o, n_out), tuple(inner))]
        return stmts, ws, math.ceil(n_out / ws), ()
    ws = cand.workgroup_size
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


def _serial(em: _Emitter, step, kind: str, dtype: str, n_red: int, o: Var, acc: Var) -> list[Stmt]:
    loop = For("r", const_i(0), const_i(n_red), const_i(1), tuple(em.nested(step)))
    return [Let("acc", identity(kind, dtype)), loop, Store("out0", o, acc)]


def region_extents(region: Operation) -> tuple[str, int, int]:
    """(kind ``map``/``reduce``, output elements, reduced elements per output) of a region."""
    out = region.regions[0].block.ops[-1].operands[0]
    root = out.defining_op
    if root is None or root.name not in ROOT_OPS:
        return "map", out.type.num_elements, 0
    return "reduce", out.type.num_elements, math.prod(_reduce_parts(root)[1])


def candidates_for(region: Operation, profile: Any = None) -> list[LaunchCandidate]:
    """The region's launch candidates on a target (``profile``: its TargetProfile or None)."""
    kind, n_out, n_red = region_extents(region)
    out = region.regions[0].block.ops[-1].operands[0]
    if profile is None:
        return region_candidates(kind, n_out, n_red, element_bytes=out.type.dtype.itemsize)
    view = lanes_view(out.defining_op) if kind == "reduce" else None
    width = None
    if view is not None and "host_memory" in profile.features:
        width = column_width(view[2], out.type.dtype.itemsize) if view[2] > 1 else 1
    return region_candidates(kind, n_out, n_red, subgroup_size=profile.subgroup_size,
                             max_workgroup_size=profile.max_workgroup_size,
                             shared_memory_bytes=profile.shared_memory_bytes,
                             element_bytes=out.type.dtype.itemsize, lanes_width=width)


def outline_region(region: Operation, name: str, candidate: LaunchCandidate | None = None,
                   host: bool = False) -> tuple[Kernel, int]:
    """Kernel IR for one region and the number of work-groups to launch.

    A window update written in place (:mod:`accy.passes.windows`) visits only its box, on a
    ``host`` (CPU) target one row per work-item, whatever the candidate; with the default
    candidate a host target runs any map over two or more axes by rows too (a contiguous
    inner loop LLVM vectorizes, no div/mod per element).

    ``candidate`` picks the launch (work-group size, items per thread, variant); None is the
    default (:func:`accy.tuning.default_candidate`). A ``tree`` or ``lanes`` candidate on a
    map region, or a ``map`` one on a reduction, falls back to the region's own kind; a
    ``lanes`` one on a reduction without a lanes form (a contraction, non-contiguous reduced
    axes) to a ``serial`` one.
    """
    em = _Emitter(region)
    out = em.yielded()
    check_size(out.type.num_elements, f"'{region.name}' result {out.type}")
    for i, v in enumerate(region.operands):  # inputs are indexed with the same 32-bit ints
        check_size(v.type.num_elements, f"'{region.name}' operand #{i} {v.type}")
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
    cand = candidate or default_candidate(*region_extents(region))
    if is_reduce:
        if cand.variant == "map" or (cand.variant == "lanes" and lanes_view(root) is None):
            cand = default_candidate(*region_extents(region))
        body, ws, groups, shared = _emit_reduce(em, out, cand)
    elif (win := find_window(region)) is not None and win.base in em.in_place:
        body, ws, groups = emit_window(em, win, out, rows=host)
    elif host and rows_worth_it(out.type.shape) and (
            candidate is None or cand == default_candidate(*region_extents(region))):
        whole = Window(-1, (0,) * out.type.rank, out.type.shape, out)
        body, ws, groups = emit_window(em, whole, out, rows=True)
    else:
        if cand.variant != "map":
            cand = default_candidate("map", out.type.num_elements)
        body, ws, groups = _emit_map(em, out, cand)
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
        choose = ctx.options.get("launch_choices")
        for fn in module.functions:
            k = 0
            for op in fn.body.ops:
                if op.name != "dispatch.region" or op.attrs.get("kind") == VIEW_KIND:
                    continue  # a view (bufferize) reads its input's buffer: no kernel
                if op.attrs.get("kind") in FAMILY_KINDS:  # a kernel-family call: own launches
                    from accy.families.lowering import TargetBackend, expand

                    target = TargetBackend(ctx.target_profile, ctx.backend,
                                           ctx.options.get("family_choices"),
                                           ctx.options.get("family_explicit"))
                    lib_kernels, launches = expand(op, target)
                    kernels.update(lib_kernels)
                    op.attrs["launches"] = launches
                    continue
                name = _kernel_name(fn.name, k, op.attrs.get("kind", "map"), kernels)
                k += 1
                cands = candidates_for(op, ctx.target_profile)
                default = cands[0] if cands else None
                outline = partial(outline_region, host=_is_host(ctx.target_profile))
                kernel, groups = outline(op, name, default)
                kernel, groups, cands = fit_loop_budget(op, name, kernel, groups, cands,
                                                        ctx.target_profile, outline)
                if cands and cands[0] != default:
                    op.attrs.update(candidate=cands[0].label(), candidate_source="loop-budget")
                op.attrs["candidates"] = ",".join(c.label() for c in cands)
                picked = choose(name, kernel, op, cands) if choose is not None else None
                if picked is not None and not _allowed(picked[0], cands, ctx.target_profile):
                    picked = None  # a cached or explicit choice the loop budget rules out
                if picked is not None and picked[0] != cands[0]:
                    kernel, groups = outline(op, name, picked[0])
                    op.attrs.update(candidate=picked[0].label(), candidate_source=picked[1])
                kernels[name] = kernel
                op.attrs.update(kernel=name, workgroup_size=kernel.workgroup_size, groups=groups)
        module.attrs["kernels"] = kernels
        return True


def _is_host(profile: Any) -> bool:
    """Whether kernels run on host cores (the CPU backend's ``host_memory`` feature)."""
    return profile is not None and "host_memory" in profile.features


def _allowed(candidate: LaunchCandidate, cands: list[LaunchCandidate], profile: Any) -> bool:
    """Whether a chosen candidate may be used: any without a loop budget, else a listed one
    (the list holds only those under the budget, :mod:`accy.passes.loop_budget`)."""
    return getattr(profile, "max_loop_iterations", None) is None or candidate in cands


def structural_fingerprint(kernel: Kernel) -> str:
    """Fingerprint of a kernel's code without its name (the tuning cache's kernel key)."""
    return replace(kernel, name="kernel").fingerprint()
