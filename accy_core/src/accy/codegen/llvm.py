"""Kernel IR → LLVM IR text, once for every target (see :mod:`accy.codegen.target`).

CPU mode (``target.simt`` false) produces, per kernel::

    define void @<name>(ptr %bufs, ptr %scalars, i32 %wg_begin, i32 %wg_end, i32 %nwg)

``bufs`` holds one buffer pointer per buffer parameter (launch order); ``scalars`` holds one
8-byte little-endian slot per scalar parameter (value in its own dtype at the slot start,
bool as one byte). It loads them and calls ``@<name>.body`` (``alwaysinline``, ``noalias``
buffer pointers), which loops over work-groups ``[wg_begin, wg_end)`` and, inside, over local
ids ``0 .. workgroup_size`` (a constant trip count, so O3 vectorizes it; but see
:func:`accy.codegen.gathers.gathering_loops`: kernels whose work-item loops stay scalar). A
kernel with barriers is split at them into regions, each its own local-id loop (PoCL's
work-item loops); ``For``/``If`` statements containing barriers run at work-group level
around their regions. Variables used in more than one region become per-work-item arrays;
shared arrays become per-call stack arrays. Because buffers are ``noalias``, one launch
must not pass the same buffer twice unless the kernel was generated with ``noalias=False``.

SIMT mode (GPU) emits one entry function per kernel through the target's hooks.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from accy.codegen.emitter import FunctionEmitter, symbol
from accy.codegen.gathers import gathering_loops
from accy.codegen.target import TargetDescription, llvm_type, memory_type
from accy.errors import VerifyError
from accy.kernel import ir
from accy.kernel.verifier import contains_barrier, uniform_variables, verify_kernel

__all__ = ["emit_llvm_ir", "emit_llvm_module", "partition_regions"]


@dataclass
class Region:
    """Barrier-free statements run by every work-item of a work-group in one local-id loop."""

    stmts: tuple[ir.Stmt, ...]


@dataclass
class GroupFor:
    """A uniform ``For`` containing barriers, run at work-group level."""

    stmt: ir.For
    body: list[Region | GroupFor | GroupIf] = field(default_factory=list)


@dataclass
class GroupIf:
    """A uniform ``If`` containing barriers, run at work-group level."""

    stmt: ir.If
    then: list[Region | GroupFor | GroupIf] = field(default_factory=list)
    orelse: list[Region | GroupFor | GroupIf] = field(default_factory=list)


@dataclass
class GroupPrefetch:
    """A ``Prefetch`` (uniform), issued once per work-group between work-item loops: in a
    work-item loop, ``llvm.prefetch`` kept LLVM's loop vectorizer off the whole loop."""

    stmt: ir.Prefetch


Node = Region | GroupFor | GroupIf | GroupPrefetch


def _group_level(stmts: tuple[ir.Stmt, ...]) -> bool:
    """Whether ``stmts`` hold a ``Barrier`` or a ``Prefetch`` at any depth (run at work-group
    level, between work-item loops)."""
    return contains_barrier(stmts) or any(isinstance(n, ir.Prefetch)
                                          for n in ir.walk_nodes(stmts))


def partition_regions(stmts: tuple[ir.Stmt, ...]) -> list[Node]:
    """Split ``stmts`` at barriers into regions and work-group-level loops/branches."""
    out: list[Node] = []
    current: list[ir.Stmt] = []

    def flush() -> None:
        if current:
            out.append(Region(tuple(current)))
            current.clear()

    for s in stmts:
        if isinstance(s, ir.Barrier):
            flush()
        elif isinstance(s, ir.Prefetch):
            flush()
            out.append(GroupPrefetch(s))
        elif isinstance(s, ir.For) and _group_level(s.body):
            flush()
            out.append(GroupFor(s, partition_regions(s.body)))
        elif isinstance(s, ir.If) and _group_level((s,)):
            flush()
            out.append(GroupIf(s, partition_regions(s.then), partition_regions(s.orelse)))
        else:
            current.append(s)
    flush()
    return out


# -------------------------------------------------------------------- cross-region variables


def _expr_names(e: ir.Expr, out: set[str]) -> None:
    match e:
        case ir.Var(name, _):
            out.add(name)
        case ir.Unary(_, x, _) | ir.Cast(x, _) | ir.Bitcast(x, _):
            _expr_names(x, out)
        case ir.Binary(_, a, b, _):
            _expr_names(a, out)
            _expr_names(b, out)
        case ir.Select(c, a, b, _) | ir.Fma(a, b, c, _):
            for x in (c, a, b):
                _expr_names(x, out)
        case ir.Load(_, index, _) | ir.SharedLoad(_, index, _):
            _expr_names(index, out)


def _stmt_names(stmts: tuple[ir.Stmt, ...], out: set[str]) -> None:
    for s in stmts:
        match s:
            case ir.Let(name, value) | ir.Assign(name, value):
                out.add(name)
                _expr_names(value, out)
            case ir.Store(_, index, value) | ir.SharedStore(_, index, value):
                _expr_names(index, out)
                _expr_names(value, out)
            case ir.AtomicRMW(_, _, index, value):
                _expr_names(index, out)
                _expr_names(value, out)
            case ir.Prefetch(_, index):
                _expr_names(index, out)
            case ir.For(var, start, stop, step, body):
                out.add(var)
                for x in (start, stop, step):
                    _expr_names(x, out)
                _stmt_names(body, out)
            case ir.If(cond, then, orelse):
                _expr_names(cond, out)
                _stmt_names(then, out)
                _stmt_names(orelse, out)


def _variable_placement(nodes: list[Node]) -> tuple[frozenset[str], frozenset[str]]:
    """Return ``(per_item, group_loop_vars)``: names used in several regions (or at work-group
    level) and the loop variables of work-group-level loops."""
    uses: dict[str, set[int]] = {}
    group_vars: set[str] = set()
    counter = [0]

    def note(names: set[str], region: int) -> None:
        for n in names:
            uses.setdefault(n, set()).add(region)

    def walk(ns: list[Node]) -> None:
        for node in ns:
            names: set[str] = set()
            if isinstance(node, Region):
                counter[0] += 1
                _stmt_names(node.stmts, names)
                note(names, counter[0])
            elif isinstance(node, GroupFor):
                group_vars.add(node.stmt.var)
                for x in (node.stmt.start, node.stmt.stop, node.stmt.step):
                    _expr_names(x, names)
                note(names, -1)
                walk(node.body)
            elif isinstance(node, GroupPrefetch):
                _expr_names(node.stmt.index, names)
                note(names, -1)
            else:
                _expr_names(node.stmt.cond, names)
                note(names, -1)
                walk(node.then)
                walk(node.orelse)

    walk(nodes)
    per_item = {n for n, r in uses.items() if len(r) > 1} - group_vars
    return frozenset(per_item), frozenset(group_vars)


def _uniform_constants(kernel: ir.Kernel) -> frozenset[str]:
    """Variables every work-item of a group sets to the same value and never reassigns: one
    ``Let`` of a uniform expression (group id, scalars, constants), no ``Assign``. Live
    across barrier regions they need one slot, not a per-work-item array, so the vectorizer
    sees them as uniform (a per-item copy would turn a uniform address into a gather)."""
    uniform, _ = uniform_variables(kernel)
    lets: dict[str, int] = {}
    assigned: set[str] = set()

    def walk(stmts: tuple[ir.Stmt, ...]) -> None:
        for s in stmts:
            if isinstance(s, ir.Let):
                lets[s.name] = lets.get(s.name, 0) + 1
            elif isinstance(s, ir.Assign):
                assigned.add(s.name)
            elif isinstance(s, ir.For):
                assigned.add(s.var)
                walk(s.body)
            elif isinstance(s, ir.If):
                walk(s.then)
                walk(s.orelse)

    walk(kernel.body)
    return frozenset(n for n, c in lets.items() if c == 1 and n not in assigned and n in uniform)


# ------------------------------------------------------------------------------- CPU mode


def _cpu_functions(
    kernel: ir.Kernel, target: TargetDescription, noalias: bool, metadata: list[str]
) -> tuple[list[str], dict[str, str]]:
    ws = kernel.workgroup_size
    nodes = partition_regions(kernel.body)
    per_item, _ = _variable_placement(nodes)
    per_item -= _uniform_constants(kernel)
    bufs = {p.name: f"%b{i}" for i, p in enumerate(kernel.buffers)}
    scalars = {p.name: f"%s{i}" for i, p in enumerate(kernel.scalars)}
    em = FunctionEmitter(kernel, target, bufs, scalars, per_item)
    scalar_lid = gathering_loops(kernel)  # local-id loops not vectorized
    em.lid_loop_metadata = metadata if scalar_lid else None
    for a in kernel.shared:
        em.shared_values[a.name] = f"%shared.{a.name}"
        em.allocas.append(
            f"  %shared.{a.name} = alloca [{a.size_elems} x {memory_type(a.dtype)}], align 64"
        )
    em.thread_ids.update(group="%wg", num_groups="%nwg")
    em.emit("%wg.nonempty = icmp slt i32 %wg_begin, %wg_end")
    em.emit("br i1 %wg.nonempty, label %wg.pre, label %done")
    em.label("wg.pre")
    em.emit("br label %wg.body")
    em.label("wg.body")
    em.emit("%wg = phi i32 [%wg_begin, %wg.pre], [%wg.next, %wg.latch]")
    em.emit(f"%wg.base = mul nsw i32 %wg, {ws}")
    _cpu_nodes(em, nodes, top=True)
    em.emit("br label %wg.latch")
    em.label("wg.latch")
    em.emit("%wg.next = add nsw i32 %wg, 1")
    em.emit("%wg.more = icmp slt i32 %wg.next, %wg_end")
    em.emit(f"br i1 %wg.more, label %wg.body, label %done{_scalar_loop(em)}")
    em.label("done")
    em.emit("ret void")

    na = "noalias " if noalias else ""
    params = [f"ptr {na}%b{i}" for i in range(len(kernel.buffers))]
    params += [f"{llvm_type(p.dtype)} %s{i}" for i, p in enumerate(kernel.scalars)]
    params += ["i32 %wg_begin", "i32 %wg_end", "i32 %nwg"]
    body_name = symbol(kernel.name + ".body")
    body = [
        f"define internal void {body_name}({', '.join(params)}) alwaysinline nounwind {{",
        "entry:",
        *em.allocas,
        *em.lines,
        "}",
    ]
    signature = "(ptr %bufs, ptr %scalars, i32 %wg_begin, i32 %wg_end, i32 %nwg)"
    wrapper = [f"define void {symbol(kernel.name)}{signature} nounwind {{", "entry:"]
    args = []
    for i in range(len(kernel.buffers)):
        wrapper += [
            f"  %bp{i} = getelementptr inbounds ptr, ptr %bufs, i64 {i}",
            f"  %b{i} = load ptr, ptr %bp{i}, align 8",
        ]
        args.append(f"ptr %b{i}")
    for i, p in enumerate(kernel.scalars):
        wrapper.append(f"  %sp{i} = getelementptr inbounds i64, ptr %scalars, i64 {i}")
        if p.dtype == "bool":
            wrapper += [
                f"  %sb{i} = load i8, ptr %sp{i}, align 8",
                f"  %s{i} = icmp ne i8 %sb{i}, 0",
            ]
        else:
            wrapper.append(f"  %s{i} = load {llvm_type(p.dtype)}, ptr %sp{i}, align 8")
        args.append(f"{llvm_type(p.dtype)} %s{i}")
    args += ["i32 %wg_begin", "i32 %wg_end", "i32 %nwg"]
    wrapper += [f"  call void {body_name}({', '.join(args)})", "  ret void", "}"]
    return [*body, "", *wrapper], em.declarations


def _cpu_nodes(em: FunctionEmitter, nodes: list[Node], top: bool = False) -> None:
    for node in nodes:
        if isinstance(node, Region):
            _cpu_region(em, node, whole=top and len(nodes) == 1)
        elif isinstance(node, GroupFor):
            em.for_loop(node.stmt, lambda n=node: _cpu_nodes(em, n.body))
        elif isinstance(node, GroupPrefetch):
            em.stmt(node.stmt)
        else:
            em.if_else(
                node.stmt,
                lambda n=node: _cpu_nodes(em, n.then),
                lambda n=node: _cpu_nodes(em, n.orelse),
            )


def _scalar_loop(em: FunctionEmitter) -> str:
    """The ``, !llvm.loop !N`` suffix of a work-item loop's back edge that disables loop
    vectorization (:func:`~accy.codegen.gathers.gathering_loops`), or ``""``."""
    metadata = em.lid_loop_metadata
    if metadata is None:
        return ""
    if not metadata:
        metadata.append('!0 = !{!"llvm.loop.vectorize.enable", i1 false}')
    n = len(metadata)
    metadata.append(f"!{n} = distinct !{{!{n}, !0}}")
    return f", !llvm.loop !{n}"


def _item_guard(stmts: tuple[ir.Stmt, ...]) -> tuple[int, tuple[ir.Stmt, ...]] | None:
    """``(n, statements without the guard)`` of a region that is ``let g = global_id;
    if (g < n) {...}`` (the map kernels' tail guard), else None."""
    if len(stmts) != 2 or not isinstance(stmts[0], ir.Let) or not isinstance(stmts[1], ir.If):
        return None
    let, guard = stmts
    c = guard.cond
    if (not isinstance(let.value, ir.ThreadId) or let.value.kind != "global" or guard.orelse
            or not isinstance(c, ir.Binary) or c.op != "lt" or not isinstance(c.a, ir.Var)
            or c.a.name != let.name or not isinstance(c.b, ir.Const)
            or isinstance(c.b.value, bool) or not isinstance(c.b.value, int)):
        return None
    return c.b.value, (let, *guard.then)


def _cpu_region(em: FunctionEmitter, region: Region, whole: bool = False) -> None:
    """One local-id loop over the region. A map kernel's tail guard ``gid < n`` becomes the
    loop's bound (``min(ws, n - wg.base)``) instead of a branch in its body, which kept the
    loop from being vectorized whenever ``n`` is not a multiple of the work-group size. Only
    for a region that is the ``whole`` kernel: a barrier kernel's later regions read per-item
    values every work-item of the group computed."""
    ws = em.kernel.workgroup_size
    stmts = region.stmts
    guard = _item_guard(stmts) if whole else None
    bound = str(ws)
    if guard is not None:
        stmts = guard[1]
        rest = em.value(f"sub nsw i32 {guard[0]}, %wg.base")
        bound = em.value(f"call i32 @llvm.smin.i32(i32 {rest}, i32 {ws})")
        em.declare("llvm.smin.i32", "i32", ["i32", "i32"])
    pre = em.branch_to_new_block("lid.pre")
    body, latch, end = em.fresh("lid.body"), em.fresh("lid.latch"), em.fresh("lid.end")
    lid = "%" + em.fresh("lid")
    if guard is not None:
        any_item = em.value(f"icmp sgt i32 {bound}, 0")
        em.emit(f"br i1 {any_item}, label %{body}, label %{end}")
    else:
        em.emit(f"br label %{body}")
    em.label(body)
    em.emit(f"{lid} = phi i32 [0, %{pre}], [{lid}.next, %{latch}]")
    gid = em.value(f"add nsw i32 %wg.base, {lid}")
    em.thread_ids.update(local=lid, **{"global": gid})
    em.local_id = lid
    em.block(stmts)
    em.emit(f"br label %{latch}")
    em.label(latch)
    em.emit(f"{lid}.next = add nuw nsw i32 {lid}, 1")
    em.emit(f"{lid}.more = icmp slt i32 {lid}.next, {bound}")
    em.emit(f"br i1 {lid}.more, label %{body}, label %{end}{_scalar_loop(em)}")
    em.label(end)
    em.local_id = "0"
    del em.thread_ids["local"], em.thread_ids["global"]


# ------------------------------------------------------------------------------ SIMT mode


def _simt_functions(
    kernel: ir.Kernel, target: TargetDescription
) -> tuple[list[str], dict[str, str], list[str]]:
    bufs = {p.name: f"%b{i}" for i, p in enumerate(kernel.buffers)}
    scalars = {p.name: f"%s{i}" for i, p in enumerate(kernel.scalars)}
    em = FunctionEmitter(kernel, target, bufs, scalars)
    globals_: list[str] = []
    for a in kernel.shared:
        name = f"{kernel.name}.shared.{a.name}"
        globals_.append(target.shared_array_global(name, memory_type(a.dtype), a.size_elems))
        em.shared_values[a.name] = symbol(name)
    prologue_hook = getattr(target, "entry_prologue", None)
    prologue = prologue_hook(em) if prologue_hook is not None else []
    em.block(kernel.body)
    em.emit("ret void")
    fn = [target.entry_definition(kernel), "entry:", *prologue, *em.allocas, *em.lines, "}"]
    return fn, em.declarations, globals_


def emit_llvm_ir(kernel: ir.Kernel, target: TargetDescription, noalias: bool = True) -> str:
    """Return the LLVM IR module text for ``kernel`` on ``target``.

    Args:
        kernel: the kernel; verified first.
        target: the backend's target description; its ``legalize`` runs first.
        noalias: CPU mode: mark buffer pointers ``noalias`` (buffers of one launch distinct).

    Raises:
        VerifyError: the kernel is invalid.
        CapabilityError: the target cannot lower something in the kernel.
    """
    return emit_llvm_module([kernel], target, noalias=noalias, module_name=kernel.name)


def emit_llvm_module(kernels: Sequence[ir.Kernel], target: TargetDescription,
                     noalias: bool = True, module_name: str = "program") -> str:
    """Return one LLVM IR module defining every kernel of ``kernels`` (CPU or SIMT mode).

    The functions are those :func:`emit_llvm_ir` emits for each kernel, under each kernel's
    own name; declarations are merged. Compiling the whole program as one module costs one
    target-machine set-up, one round trip to the codegen worker and one JIT engine instead
    of one per kernel.

    Raises:
        VerifyError: a kernel is invalid, or two kernels share a name.
        CapabilityError: the target cannot lower something in a kernel.
    """
    names = [k.name for k in kernels]
    if len(set(names)) != len(names):
        dup = sorted({n for n in names if names.count(n) > 1})
        raise VerifyError(f"one LLVM module cannot define kernels of the same name: {dup}")
    head = [f"; ModuleID = 'accy.{module_name}'", f'source_filename = "{module_name}"']
    if target.triple:
        head.append(f'target triple = "{target.triple}"')
    if target.data_layout:
        head.append(f'target datalayout = "{target.data_layout}"')
    decls: dict[str, str] = {}
    body: list[str] = []
    metadata: list[str] = []
    for kernel in kernels:
        verify_kernel(kernel)
        target.legalize(kernel)
        head += target.module_prelude(kernel)
        if target.simt:
            fns, kdecls, globals_ = _simt_functions(kernel, target)
            head += globals_
        else:
            fns, kdecls = _cpu_functions(kernel, target, noalias, metadata)
        decls.update(kdecls)
        body += ["", *fns]
    return "\n".join([*head, "", *sorted(decls.values()), *body, "", *metadata, ""])
