"""Check a kernel-IR :class:`~accy.kernel.Kernel` before anything lowers it.

Checks: names (parameters, variables in scope, buffers, shared arrays) are defined and unique,
dtypes agree (operands, stores, conditions, indices), ops are known and valid for their dtype,
stores and atomics only target ``write``/``readwrite`` buffers, and every ``Barrier`` and
``Prefetch`` sits in uniform control flow: only under ``For`` loops whose bounds and ``If``
conditions do not depend on the local/global thread id (directly or through variables), the
values of buffers, or shared memory (a ``Prefetch``'s index too). Messages name the kernel
and the statement (``kernel 'k': stmt 3.1 ...``).
"""

from __future__ import annotations

import operator
from dataclasses import dataclass, field

from accy.errors import VerifyError
from accy.kernel import ir
from accy.kernel.printer import stmt_lines

__all__ = ["contains_barrier", "uniform_variables", "verify_kernel"]

_FLOAT_ONLY_UNARY = frozenset(ir.UNARY_OPS) - {"neg", "abs", "not"}
_INT_ONLY_BINARY = frozenset({"and", "or", "xor", "shl", "shr"})


def contains_barrier(stmts: tuple[ir.Stmt, ...]) -> bool:
    """Return whether ``stmts`` contain a ``Barrier`` at any depth."""
    for s in stmts:
        if isinstance(s, ir.Barrier):
            return True
        if isinstance(s, ir.For) and contains_barrier(s.body):
            return True
        if isinstance(s, ir.If) and (contains_barrier(s.then) or contains_barrier(s.orelse)):
            return True
    return False


def _expr_uniform(e: ir.Expr, varying: set[str]) -> bool:
    match e:
        case ir.Const() | ir.ThreadId(kind="group") | ir.ThreadId(kind="num_groups"):
            return True
        case ir.Var(name, _):
            return name not in varying
        case ir.Unary(_, x, _) | ir.Cast(x, _) | ir.Bitcast(x, _):
            return _expr_uniform(x, varying)
        case ir.Binary(_, a, b, _):
            return _expr_uniform(a, varying) and _expr_uniform(b, varying)
        case ir.Select(c, a, b, _) | ir.Fma(a, b, c, _):
            return all(_expr_uniform(x, varying) for x in (c, a, b))
    return False  # local/global ids, loads


def _mark_varying(stmts: tuple[ir.Stmt, ...], varying: set[str], under_varying: bool) -> None:
    for s in stmts:
        match s:
            case ir.Let(name, value) | ir.Assign(name, value):
                if under_varying or not _expr_uniform(value, varying):
                    varying.add(name)
            case ir.For(var, start, stop, step, body):
                bad = under_varying or not all(
                    _expr_uniform(x, varying) for x in (start, stop, step)
                )
                if bad:
                    varying.add(var)
                _mark_varying(body, varying, bad)
            case ir.If(cond, then, orelse):
                bad = under_varying or not _expr_uniform(cond, varying)
                _mark_varying(then, varying, bad)
                _mark_varying(orelse, varying, bad)


def uniform_variables(kernel: ir.Kernel) -> tuple[frozenset[str], frozenset[str]]:
    """Return ``(uniform, varying)`` variable names of ``kernel`` (fixpoint analysis).

    A variable is varying when any definition of it depends on the local or global id, on a
    load, on a varying variable, or happens under varying control flow.
    """
    varying: set[str] = set()
    while True:
        before = len(varying)
        _mark_varying(kernel.body, varying, False)
        if len(varying) == before:
            break
    names = {p.name for p in kernel.scalars} | set(_defined_names(kernel.body))
    return frozenset(names - varying), frozenset(varying)


def _defined_names(stmts: tuple[ir.Stmt, ...]) -> list[str]:
    out: list[str] = []
    for s in stmts:
        if isinstance(s, ir.Let):
            out.append(s.name)
        elif isinstance(s, ir.For):
            out += [s.var, *_defined_names(s.body)]
        elif isinstance(s, ir.If):
            out += _defined_names(s.then) + _defined_names(s.orelse)
    return out


@dataclass
class _Checker:
    kernel: ir.Kernel
    varying: frozenset[str]
    buffers: dict[str, ir.BufferParam] = field(default_factory=dict)
    shared: dict[str, ir.SharedArray] = field(default_factory=dict)

    def fail(self, where: str, message: str) -> VerifyError:
        return VerifyError(f"kernel {self.kernel.name!r}: {where}: {message}", position=where)

    # expressions -----------------------------------------------------------------------
    def expr(self, e: ir.Expr, scope: dict[str, str], where: str) -> None:  # noqa: C901 - one case per op
        if e.dtype not in ir.DTYPES:
            raise self.fail(where, f"unknown dtype {e.dtype!r}; known: {', '.join(ir.DTYPES)}")
        match e:
            case ir.Const(value, _):
                if not isinstance(value, int | float | bool):
                    raise self.fail(where, f"constant must be int, float or bool, got {value!r}")
            case ir.Var(name, dtype):
                if name not in scope:
                    raise self.fail(where, f"undefined variable {name!r}; declare it with Let")
                if scope[name] != dtype:
                    raise self.fail(where, f"variable {name!r} is {scope[name]}, used as {dtype}")
            case ir.ThreadId(kind, dtype):
                if kind not in ir.THREAD_ID_KINDS or dtype != "i32":
                    raise self.fail(
                        where,
                        f"thread id must be one of global/local/group/"
                        f"num_groups with dtype i32, got {kind!r} {dtype}",
                    )
            case ir.Unary(op, x, dtype):
                self.expr(x, scope, where)
                self.unary(op, x.dtype, dtype, where)
            case ir.Binary(op, a, b, dtype):
                self.expr(a, scope, where)
                self.expr(b, scope, where)
                self.binary(op, a.dtype, b.dtype, dtype, where)
            case ir.Select(c, a, b, dtype):
                for x in (c, a, b):
                    self.expr(x, scope, where)
                if c.dtype != "bool" or a.dtype != dtype or b.dtype != dtype:
                    raise self.fail(
                        where,
                        f"select needs (bool, {dtype}, {dtype}), got "
                        f"({c.dtype}, {a.dtype}, {b.dtype})",
                    )
            case ir.Fma(a, b, x, dtype):
                for y in (a, b, x):
                    self.expr(y, scope, where)
                if dtype == "bool" or not a.dtype == b.dtype == x.dtype == dtype:
                    raise self.fail(where, f"fma needs three {dtype} operands (not bool), got "
                                    f"({a.dtype}, {b.dtype}, {x.dtype})")
            case ir.Cast(x, _):
                self.expr(x, scope, where)
            case ir.Bitcast(x, dtype):
                self.expr(x, scope, where)
                if "bool" in (x.dtype, dtype) or ir.dtype_bytes(x.dtype) != ir.dtype_bytes(dtype):
                    raise self.fail(where, f"bitcast needs equal widths, got {x.dtype} -> {dtype}")
            case ir.Load(buf, index, dtype):
                self.index(index, scope, where)
                p = self.buffer(buf, where)
                if p.dtype != dtype:
                    raise self.fail(where, f"load of {buf!r} ({p.dtype}) typed as {dtype}")
            case ir.SharedLoad(arr, index, dtype):
                self.index(index, scope, where)
                if self.array(arr, where).dtype != dtype:
                    raise self.fail(where, f"shared load of {arr!r} typed as {dtype}")

    def unary(self, op: str, x: str, dtype: str, where: str) -> None:
        if op not in ir.UNARY_OPS:
            raise self.fail(
                where, f"unknown unary op {op!r}; known: {', '.join(sorted(ir.UNARY_OPS))}"
            )
        if x != dtype:
            raise self.fail(where, f"unary {op!r} result dtype {dtype} differs from operand {x}")
        if op in _FLOAT_ONLY_UNARY and x not in ir.FLOAT_DTYPES:
            raise self.fail(where, f"unary {op!r} needs f32 or f64, got {x}; cast first")
        if op in ("neg", "abs") and x == "bool":
            raise self.fail(where, f"unary {op!r} is not defined for bool")

    def binary(self, op: str, a: str, b: str, dtype: str, where: str) -> None:
        if op not in ir.BINARY_OPS:
            raise self.fail(
                where, f"unknown binary op {op!r}; known: {', '.join(sorted(ir.BINARY_OPS))}"
            )
        if a != b:
            raise self.fail(where, f"binary {op!r} operand dtypes differ: {a} and {b}; cast one")
        want = "bool" if op in ir.COMPARE_OPS else a
        if dtype != want:
            raise self.fail(where, f"binary {op!r} on {a} must have dtype {want}, got {dtype}")
        if op in _INT_ONLY_BINARY and a in ir.FLOAT_DTYPES:
            raise self.fail(where, f"binary {op!r} needs an integer or bool dtype, got {a}")
        if op in ("shl", "shr") and a == "bool":
            raise self.fail(where, f"binary {op!r} is not defined for bool")
        if op == "mulhi" and a not in ("i32", "u32"):
            raise self.fail(where, f"mulhi needs i32 or u32 operands, got {a}")
        if op == "pow" and a not in ir.FLOAT_DTYPES:
            raise self.fail(where, f"pow needs f32 or f64, got {a}; cast first")
        if op in ("add", "sub", "mul", "div", "rem") and a == "bool":
            raise self.fail(where, f"binary {op!r} is not defined for bool; use and/or/xor")

    def index(self, index: ir.Expr, scope: dict[str, str], where: str) -> None:
        self.expr(index, scope, where)
        if index.dtype not in ir.INT_DTYPES:
            raise self.fail(where, f"index must be i32, i64 or u32, got {index.dtype}")

    def buffer(self, name: str, where: str) -> ir.BufferParam:
        if name not in self.buffers:
            raise self.fail(where, f"undefined buffer {name!r}; known: {', '.join(self.buffers)}")
        return self.buffers[name]

    def array(self, name: str, where: str) -> ir.SharedArray:
        if name not in self.shared:
            raise self.fail(
                where, f"undefined shared array {name!r}; known: {', '.join(self.shared)}"
            )
        return self.shared[name]

    def writable(self, name: str, what: str, where: str) -> ir.BufferParam:
        p = self.buffer(name, where)
        if p.access == "read":
            raise self.fail(
                where, f"{what} to read-only buffer {name!r}; declare it 'write' or 'readwrite'"
            )
        return p

    # statements ------------------------------------------------------------------------
    def block(
        self, stmts: tuple[ir.Stmt, ...], scope: dict[str, str], path: str, varying_flow: bool
    ) -> None:
        scope = dict(scope)
        for i, s in enumerate(stmts):
            where = f"stmt {path}{i} `{stmt_lines(s, '')[0].strip()}`"
            self.stmt(s, scope, f"{path}{i}.", where, varying_flow)

    def stmt(  # noqa: C901 - one case per statement kind
        self,
        s: ir.Stmt,
        scope: dict[str, str],
        path: str,
        where: str,
        varying_flow: bool,
    ) -> None:
        match s:
            case ir.Let(name, value):
                self.expr(value, scope, where)
                if name in scope:
                    raise self.fail(where, f"variable {name!r} is already defined in this scope")
                scope[name] = value.dtype
            case ir.Assign(name, value):
                self.expr(value, scope, where)
                if name not in scope:
                    raise self.fail(where, f"assignment to undefined variable {name!r}")
                if scope[name] != value.dtype:
                    raise self.fail(
                        where, f"variable {name!r} is {scope[name]}, assigned {value.dtype}"
                    )
            case ir.Store(buf, index, value):
                self.index(index, scope, where)
                self.expr(value, scope, where)
                p = self.writable(buf, "store", where)
                if p.dtype != value.dtype:
                    raise self.fail(where, f"store of {value.dtype} to {p.dtype} buffer {buf!r}")
            case ir.SharedStore(arr, index, value):
                self.index(index, scope, where)
                self.expr(value, scope, where)
                if self.array(arr, where).dtype != value.dtype:
                    raise self.fail(where, f"store of {value.dtype} to shared {arr!r}")
            case ir.AtomicRMW(op, buf, index, value):
                self.index(index, scope, where)
                self.expr(value, scope, where)
                p = self.writable(buf, "atomic", where)
                if op not in ir.ATOMIC_OPS:
                    raise self.fail(
                        where,
                        f"unknown atomic op {op!r}; known: {', '.join(sorted(ir.ATOMIC_OPS))}",
                    )
                if p.dtype != value.dtype or p.dtype == "bool":
                    raise self.fail(where, f"atomic {op} of {value.dtype} on {p.dtype} buffer")
                if op in ("or", "and") and p.dtype in ir.FLOAT_DTYPES:
                    raise self.fail(where, f"atomic {op} needs an integer buffer, got {p.dtype}")
            case ir.For(var, start, stop, step, body):
                for x in (start, stop, step):
                    self.expr(x, scope, where)
                if start.dtype not in ir.INT_DTYPES or {stop.dtype, step.dtype} != {start.dtype}:
                    raise self.fail(
                        where,
                        f"for bounds must share one integer dtype, got "
                        f"{start.dtype}, {stop.dtype}, {step.dtype}",
                    )
                if isinstance(step, ir.Const) and step.value <= 0:
                    raise self.fail(where, f"for step must be > 0, got {step.value}")
                inner = {**scope, var: start.dtype}
                self.block(body, inner, path, varying_flow or var in self.varying)
            case ir.If(cond, then, orelse):
                self.expr(cond, scope, where)
                if cond.dtype != "bool":
                    raise self.fail(where, f"if condition must be bool, got {cond.dtype}")
                bad = varying_flow or not _expr_uniform(cond, set(self.varying))
                self.block(then, scope, path + "then.", bad)
                self.block(orelse, scope, path + "else.", bad)
            case ir.Prefetch(buf, index):
                self.index(index, scope, where)
                self.buffer(buf, where)
                if varying_flow or not _expr_uniform(index, set(self.varying)):
                    raise self.fail(
                        where,
                        "prefetch index or control flow depends on the thread id or loaded "
                        "data; a prefetch is issued once per work-group (uniform index, "
                        "uniform control flow)",
                    )
            case ir.Barrier():
                if varying_flow:
                    raise self.fail(
                        where,
                        "barrier in control flow that depends on the thread "
                        "id or loaded data; move it to uniform control flow",
                    )
            case _:
                raise self.fail(where, f"unknown statement {type(s).__name__}")


def verify_kernel(kernel: ir.Kernel) -> None:
    """Check ``kernel``; return ``None`` when valid.

    Raises:
        VerifyError: the first problem found; the message names the kernel and statement.
    """
    c = _Checker(kernel, uniform_variables(kernel)[1])
    try:  # 32.5 verified, then failed at launch
        operator.index(kernel.workgroup_size)
    except TypeError:
        raise c.fail("header", f"workgroup_size must be an int, got "
                     f"{kernel.workgroup_size!r}") from None
    if kernel.workgroup_size < 1:
        raise c.fail("header", f"workgroup_size must be >= 1, got {kernel.workgroup_size}")
    names: set[str] = set()
    for p in (*kernel.buffers, *kernel.scalars, *kernel.shared):
        if p.name in names:
            raise c.fail("header", f"parameter or shared array {p.name!r} is declared twice")
        names.add(p.name)
        if p.dtype not in ir.DTYPES:
            raise c.fail("header", f"{p.name!r} has unknown dtype {p.dtype!r}")
    for b in kernel.buffers:
        if b.access not in ir.ACCESS_MODES:
            raise c.fail(
                "header",
                f"buffer {b.name!r} access must be read, write or readwrite, got {b.access!r}",
            )
        c.buffers[b.name] = b
    for a in kernel.shared:
        if a.size_elems < 1:
            raise c.fail("header", f"shared array {a.name!r} needs size_elems >= 1")
        c.shared[a.name] = a
    c.block(kernel.body, {s.name: s.dtype for s in kernel.scalars}, "", False)
