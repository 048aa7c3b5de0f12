"""Lower kernel-IR expressions and statements to LLVM IR text inside one function.

Variables live in ``alloca`` slots of the entry block (SROA/mem2reg promote them); on the CPU
a variable live across barrier regions gets a per-work-item array slot ``[WS x T]`` indexed by
the local id. Semantics follow :mod:`accy.kernel.interpreter` exactly (wrapping integers, safe
integer division, masked shift amounts, saturating float→int casts, minNum/maxNum). No
fast-math or ``contract`` flags are emitted, so float results match numpy's operation order.
"""

from __future__ import annotations

import re
import struct
from collections.abc import Callable
from dataclasses import dataclass

from accy.codegen import ops
from accy.codegen.target import TargetDescription, llvm_type, memory_type
from accy.errors import InternalError
from accy.kernel import ir

__all__ = ["FunctionEmitter", "Slot", "float_literal", "symbol"]

_INT_BITS = {"i32": 32, "u32": 32, "i64": 64, "u64": 64, "i8": 8, "u8": 8, "i16": 16, "u16": 16}


def symbol(name: str) -> str:
    """Return ``@name`` (quoted when ``name`` is not a plain LLVM identifier)."""
    return f"@{name}" if re.fullmatch(r"[A-Za-z_.$][\w.$]*", name) else f'@"{name}"'


def float_literal(value: float, dtype: str) -> str:
    """Return an exact LLVM hex literal for ``value`` (f32 values are rounded to f32 first)."""
    if dtype == "f32":
        value = struct.unpack("<f", struct.pack("<f", value))[0]
    bits = struct.unpack("<Q", struct.pack("<d", value))[0]
    return f"0x{bits:016X}"


@dataclass(frozen=True)
class Slot:
    """Storage of one variable: pointer value, element type, per-work-item array or not."""

    pointer: str
    type: str
    per_item: bool = False


class FunctionEmitter:
    """Accumulates instructions of one LLVM function; lowers expressions and statements.

    Args:
        kernel: the kernel being lowered.
        target: the target description.
        buffer_values: LLVM pointer value per buffer name (``%b0``).
        scalar_values: LLVM value per scalar-parameter name (``%s0``).
        per_item_vars: variable names that need per-work-item array slots (CPU barriers).
    """

    def __init__(
        self,
        kernel: ir.Kernel,
        target: TargetDescription,
        buffer_values: dict[str, str],
        scalar_values: dict[str, str],
        per_item_vars: frozenset[str] = frozenset(),
    ) -> None:
        self.kernel = kernel
        self.target = target
        self.buffers = {p.name: p for p in kernel.buffers}
        self.shared = {a.name: a for a in kernel.shared}
        self.buffer_values = buffer_values
        self.scalar_values = scalar_values
        self.per_item_vars = per_item_vars
        self.lines: list[str] = []
        self.allocas: list[str] = []
        self.declarations: dict[str, str] = {}
        self.slots: dict[tuple[str, str], Slot] = {}
        self.shared_values: dict[str, str] = {}
        self.thread_ids: dict[str, str] = {}
        self.local_id = "0"
        self._counter = 0
        self.statement_hook: Callable[[ir.Stmt], bool] | None = None
        #: CPU mode: the module's metadata lines, when the local-id loops carry
        #: ``llvm.loop.vectorize.enable false`` (:func:`accy.codegen.llvm.gathering_loops`)
        self.lid_loop_metadata: list[str] | None = None

    # basic building ---------------------------------------------------------------------
    def fresh(self, prefix: str = "v") -> str:
        """Return a new unique local value or label name (without ``%``)."""
        self._counter += 1
        return f"{prefix}{self._counter}"

    def emit(self, text: str) -> None:
        """Append one instruction."""
        self.lines.append("  " + text)

    def value(self, text: str) -> str:
        """Append ``%v = text`` and return ``%v``."""
        name = "%" + self.fresh()
        self.emit(f"{name} = {text}")
        return name

    def label(self, name: str) -> None:
        """Start basic block ``name``."""
        self.lines.append(f"{name}:")

    def branch_to_new_block(self, prefix: str) -> str:
        """Close the current block with a branch to a new block ``prefix<n>`` and open it."""
        name = self.fresh(prefix)
        self.emit(f"br label %{name}")
        self.label(name)
        return name

    def declare(self, callee: str, ret: str, args: list[str]) -> None:
        """Declare external function ``@callee`` once."""
        self.declarations[callee] = f"declare {ret} {symbol(callee)}({', '.join(args)})"

    def call(self, callee: str, ret: str, args: list[tuple[str, str]]) -> str:
        """Call ``@callee`` with ``(type, value)`` args and return the result value."""
        self.declare(callee, ret, [t for t, _ in args])
        text = ", ".join(f"{t} {v}" for t, v in args)
        return self.value(f"call {ret} {symbol(callee)}({text})")

    # variables --------------------------------------------------------------------------
    def slot(self, name: str, dtype: str) -> Slot:
        """Return (creating in the entry block) the storage of variable ``name``."""
        key = (name, dtype)
        if key not in self.slots:
            ty = llvm_type(dtype)
            ptr = "%" + self.fresh(f"var.{re.sub(r'[^A-Za-z0-9_]', '_', name)}.")
            per_item = name in self.per_item_vars
            alloc = f"[{self.kernel.workgroup_size} x {ty}]" if per_item else ty
            self.allocas.append(f"  {ptr} = alloca {alloc}, align 8")
            self.slots[key] = Slot(ptr, ty, per_item)
        return self.slots[key]

    def slot_pointer(self, s: Slot) -> str:
        """Return the pointer of the current work-item's element of slot ``s``."""
        if not s.per_item:
            return s.pointer
        ws = self.kernel.workgroup_size
        return self.value(
            f"getelementptr inbounds [{ws} x {s.type}], ptr {s.pointer}, i32 0, i32 {self.local_id}"
        )

    def store_var(self, name: str, value: str, dtype: str) -> None:
        """Store ``value`` into variable ``name``."""
        s = self.slot(name, dtype)
        self.emit(f"store {s.type} {value}, ptr {self.slot_pointer(s)}")

    # expressions ------------------------------------------------------------------------
    def expr(self, e: ir.Expr) -> str:  # noqa: C901 - one case per op
        """Emit ``e`` and return its LLVM value (register or literal)."""
        match e:
            case ir.Const(value, dtype):
                return self.constant(value, dtype)
            case ir.Var(name, dtype):
                if name in self.scalar_values:
                    return self.scalar_values[name]
                s = self.slot(name, dtype)
                return self.value(f"load {s.type}, ptr {self.slot_pointer(s)}")
            case ir.ThreadId(kind, _):
                return self.thread_id(kind)
            case ir.Unary(op, x, dtype):
                return self.unary(op, self.expr(x), dtype)
            case ir.Binary(op, a, b, _):
                return self.binary(op, self.expr(a), self.expr(b), a.dtype)
            case ir.Select(c, a, b, dtype):
                cv, av, bv = self.expr(c), self.expr(a), self.expr(b)
                t = llvm_type(dtype)
                return self.value(f"select i1 {cv}, {t} {av}, {t} {bv}")
            case ir.Fma(a, b, x, dtype):
                return ops.fma(self, self.expr(a), self.expr(b), self.expr(x), dtype)
            case ir.Cast(x, dtype):
                return self.cast(self.expr(x), x.dtype, dtype)
            case ir.Bitcast(x, dtype):
                v = self.expr(x)
                if llvm_type(x.dtype) == llvm_type(dtype):
                    return v
                return self.value(f"bitcast {llvm_type(x.dtype)} {v} to {llvm_type(dtype)}")
            case ir.Load(buf, index, dtype):
                return self.load(self.buffer_pointer(buf, index), dtype)
            case ir.SharedLoad(arr, index, dtype):
                return self.load(self.shared_pointer(arr, index), dtype)
        raise InternalError(f"codegen: unknown expression {type(e).__name__}; please report")

    def constant(self, value: float | bool, dtype: str) -> str:
        """Return the LLVM literal of a constant."""
        if dtype == "bool":
            return "true" if value else "false"
        if dtype in ir.FLOAT_DTYPES:
            return float_literal(float(value), dtype)
        bits = _INT_BITS[dtype]
        v = int(value) & ((1 << bits) - 1)
        return str(v - (1 << bits) if v >= 1 << (bits - 1) else v)

    def thread_id(self, kind: str) -> str:
        """Return the i32 value of thread id ``kind``."""
        if self.target.simt:
            return self.target.thread_id(self, kind)
        if kind not in self.thread_ids:
            raise InternalError(
                f"codegen: thread id {kind!r} read outside a work-item loop; please report"
            )
        return self.thread_ids[kind]

    def load(self, pointer: str, dtype: str) -> str:
        """Load a ``dtype`` element through typed pointer ``pointer`` (bool: byte ≠ 0)."""
        mt = memory_type(dtype)
        v = self.value(f"load {mt}, {pointer}, align {ir.dtype_bytes(dtype)}")
        return self.value(f"icmp ne i8 {v}, 0") if dtype == "bool" else v

    def store(self, pointer: str, value: str, dtype: str) -> None:
        """Store a ``dtype`` element through typed pointer ``pointer`` (bool as byte 0/1)."""
        if dtype == "bool":
            value = self.value(f"zext i1 {value} to i8")
        self.emit(f"store {memory_type(dtype)} {value}, {pointer}, align {ir.dtype_bytes(dtype)}")

    def index64(self, index: ir.Expr) -> str:
        """Emit ``index`` widened to i64 (sext for i32, zext for u32)."""
        v = self.expr(index)
        if index.dtype in ("i64", "u64"):
            return v
        ext = "zext" if index.dtype in ir.UNSIGNED_DTYPES else "sext"
        return self.value(f"{ext} {llvm_type(index.dtype)} {v} to i64")

    def buffer_pointer(self, name: str, index: ir.Expr) -> str:
        """Return the typed pointer (``ptr addrspace(1) %v3``) to element ``index`` of ``name``."""
        p = self.buffers[name]
        space = self.target.buffer_address_space
        idx = self.index64(index)
        hook = getattr(self.target, "buffer_element_pointer", None)
        if hook is not None:  # resource-handle targets (Vulkan): no pointer arithmetic
            return hook(self, self.buffer_values[name], memory_type(p.dtype), idx)
        ptr_ty = f"ptr addrspace({space})" if space else "ptr"
        v = self.value(
            f"getelementptr inbounds {memory_type(p.dtype)}, {ptr_ty} "
            f"{self.buffer_values[name]}, i64 {idx}"
        )
        return f"{ptr_ty} {v}"

    def shared_pointer(self, name: str, index: ir.Expr) -> str:
        """Return the typed pointer to element ``index`` of shared array ``name``."""
        a = self.shared[name]
        idx = self.index64(index)
        space = self.target.shared_address_space if self.target.simt else 0
        ptr_ty = f"ptr addrspace({space})" if space else "ptr"
        v = self.value(
            f"getelementptr inbounds [{a.size_elems} x {memory_type(a.dtype)}], "
            f"{ptr_ty} {self.shared_values[name]}, i64 0, i64 {idx}"
        )
        return f"{ptr_ty} {v}"

    def unary(self, op: str, x: str, dtype: str) -> str:
        """Emit unary ``op`` on value ``x`` of ``dtype``."""
        return ops.unary(self, op, x, dtype)

    def binary(self, op: str, a: str, b: str, dtype: str) -> str:
        """Emit binary ``op`` on values of operand dtype ``dtype``."""
        return ops.binary(self, op, a, b, dtype)

    def cast(self, x: str, source: str, dtype: str) -> str:
        """Emit the numeric conversion of ``x`` from ``source`` to ``dtype``."""
        return ops.cast(self, x, source, dtype)

    # statements -------------------------------------------------------------------------
    def block(self, stmts: tuple[ir.Stmt, ...]) -> None:
        """Emit statements at work-item level."""
        for s in stmts:
            if self.statement_hook is not None and self.statement_hook(s):
                continue
            self.stmt(s)

    def stmt(self, s: ir.Stmt) -> None:
        """Emit one statement at work-item level."""
        match s:
            case ir.Let(name, value) | ir.Assign(name, value):
                self.store_var(name, self.expr(value), value.dtype)
            case ir.Store(buf, index, value):
                v = self.expr(value)
                self.store(self.buffer_pointer(buf, index), v, value.dtype)
            case ir.SharedStore(arr, index, value):
                v = self.expr(value)
                self.store(self.shared_pointer(arr, index), v, value.dtype)
            case ir.AtomicRMW(op, buf, index, value):
                self.atomic(op, buf, index, value)
            case ir.For():
                self.for_loop(s, lambda: self.block(s.body))
            case ir.If():
                self.if_else(s, lambda: self.block(s.then), lambda: self.block(s.orelse))
            case ir.Barrier():
                self.target.barrier(self)
            case ir.Prefetch(buf, index):
                if not self.target.simt:  # GPU targets: dropped (see ir.Prefetch)
                    self.prefetch(buf, index)
            case _:
                raise InternalError(f"codegen: unknown statement {type(s).__name__}; please report")

    def prefetch(self, buf: str, index: ir.Expr) -> None:
        """Emit ``llvm.prefetch`` (read, locality 3, data cache) of element ``index`` of
        ``buf``: a plain ``getelementptr`` (not ``inbounds``), since a prefetch past the
        buffer is valid and must not be poison."""
        p = self.buffers[buf]
        idx = self.index64(index)
        v = self.value(f"getelementptr {memory_type(p.dtype)}, ptr {self.buffer_values[buf]}, "
                       f"i64 {idx}")
        self.declare("llvm.prefetch.p0", "void", ["ptr", "i32", "i32", "i32"])
        self.emit(f"call void @llvm.prefetch.p0(ptr {v}, i32 0, i32 3, i32 1)")

    def atomic(self, op: str, buf: str, index: ir.Expr, value: ir.Expr) -> None:
        """Emit ``atomicrmw`` (result discarded), or the target's ``atomic_rmw(em, op,
        pointer, value, dtype)`` lowering where that hook exists and returns True."""
        dtype = value.dtype
        v = self.expr(value)
        p = self.buffer_pointer(buf, index)
        if dtype in ir.FLOAT_DTYPES:
            llvm_op = {"add": "fadd", "min": "fmin", "max": "fmax", "xchg": "xchg"}[op]
        elif dtype in ir.UNSIGNED_DTYPES and op in ("min", "max"):
            llvm_op = "u" + op
        else:
            llvm_op = op
        hook = getattr(self.target, "atomic_rmw", None)  # e.g. float atomics as a CAS loop
        if hook is not None and hook(self, op, p, v, dtype):
            return
        self.emit(
            f"atomicrmw {llvm_op} {p}, {llvm_type(dtype)} {v} {self.target.atomic_ordering()}"
        )

    def for_loop(self, s: ir.For, body: Callable[[], None]) -> None:
        """Emit ``for var in range(start, stop, step)``; bounds are evaluated once."""
        t = llvm_type(s.start.dtype)
        start, stop, step = self.expr(s.start), self.expr(s.stop), self.expr(s.step)
        self.store_var(s.var, start, s.start.dtype)
        head, loop, end = self.fresh("for.head"), self.fresh("for.body"), self.fresh("for.end")
        self.emit(f"br label %{head}")
        self.label(head)
        i = self.expr(ir.Var(s.var, s.start.dtype))
        cmp = "ult" if s.start.dtype in ir.UNSIGNED_DTYPES else "slt"
        c = self.value(f"icmp {cmp} {t} {i}, {stop}")
        self.emit(f"br i1 {c}, label %{loop}, label %{end}")
        self.label(loop)
        body()
        i2 = self.expr(ir.Var(s.var, s.start.dtype))
        self.store_var(s.var, self.value(f"add {t} {i2}, {step}"), s.start.dtype)
        self.emit(f"br label %{head}")
        self.label(end)

    def if_else(self, s: ir.If, then: Callable[[], None], orelse: Callable[[], None]) -> None:
        """Emit ``if cond: then else: orelse``."""
        c = self.expr(s.cond)
        lt, le, lend = self.fresh("if.then"), self.fresh("if.else"), self.fresh("if.end")
        self.emit(f"br i1 {c}, label %{lt}, label %{le if s.orelse else lend}")
        self.label(lt)
        then()
        self.emit(f"br label %{lend}")
        if s.orelse:
            self.label(le)
            orelse()
            self.emit(f"br label %{lend}")
        self.label(lend)
