"""Print kernel IR as readable, canonical text (used by ``accy ir --stage kernel``).

The text is deterministic (it is hashed by :meth:`accy.kernel.Kernel.fingerprint`): floats
print with ``repr`` (round-trip exact), every expression carries its dtype where it is not
implied. Example::

    kernel scale(y: f32* write, x: f32* read, n: i32) workgroup_size=256 {
      if (lt(global_id, n:i32)) {
        y[global_id] = mul(2.0:f32, x[global_id]:f32)
      }
    }
"""

from __future__ import annotations

from accy.errors import InternalError
from accy.kernel import ir

__all__ = ["expr_to_text", "kernel_to_text", "stmt_lines"]


def expr_to_text(e: ir.Expr) -> str:
    """Return the canonical text of expression ``e``."""
    match e:
        case ir.Const(value, dtype):
            v = repr(bool(value)).lower() if dtype == "bool" else repr(value)
            return f"{v}:{dtype}"
        case ir.Var(name, dtype):
            return f"{name}:{dtype}"
        case ir.ThreadId(kind, _):
            return f"{kind}_id" if kind != "num_groups" else "num_groups"
        case ir.Unary(op, x, _):
            return f"{op}({expr_to_text(x)})"
        case ir.Binary(op, a, b, _):
            return f"{op}({expr_to_text(a)}, {expr_to_text(b)})"
        case ir.Select(c, a, b, _):
            return f"select({expr_to_text(c)}, {expr_to_text(a)}, {expr_to_text(b)})"
        case ir.Fma(a, b, x, _):
            return f"fma({expr_to_text(a)}, {expr_to_text(b)}, {expr_to_text(x)})"
        case ir.Cast(x, dtype):
            return f"cast<{dtype}>({expr_to_text(x)})"
        case ir.Bitcast(x, dtype):
            return f"bitcast<{dtype}>({expr_to_text(x)})"
        case ir.Load(buf, index, dtype):
            return f"{buf}[{expr_to_text(index)}]:{dtype}"
        case ir.SharedLoad(arr, index, dtype):
            return f"@{arr}[{expr_to_text(index)}]:{dtype}"
    raise InternalError(f"kernel printer: unknown expression {type(e).__name__}; please report")


def stmt_lines(s: ir.Stmt, indent: str = "  ") -> list[str]:
    """Return the text lines of statement ``s`` with ``indent`` prefixed."""
    t = expr_to_text
    match s:
        case ir.Let(name, value):
            return [f"{indent}let {name}: {value.dtype} = {t(value)}"]
        case ir.Assign(name, value):
            return [f"{indent}{name} = {t(value)}"]
        case ir.Store(buf, index, value):
            return [f"{indent}{buf}[{t(index)}] = {t(value)}"]
        case ir.SharedStore(arr, index, value):
            return [f"{indent}@{arr}[{t(index)}] = {t(value)}"]
        case ir.For(var, start, stop, step, body):
            head = f"{indent}for {var} in range({t(start)}, {t(stop)}, {t(step)}) {{"
            return [head, *_block(body, indent), f"{indent}}}"]
        case ir.If(cond, then, orelse):
            lines = [f"{indent}if ({t(cond)}) {{", *_block(then, indent)]
            if orelse:
                lines += [f"{indent}}} else {{", *_block(orelse, indent)]
            return [*lines, f"{indent}}}"]
        case ir.Barrier():
            return [f"{indent}barrier"]
        case ir.AtomicRMW(op, buf, index, value):
            return [f"{indent}atomic_{op}({buf}[{t(index)}], {t(value)})"]
        case ir.Prefetch(buf, index):
            return [f"{indent}prefetch {buf}[{t(index)}]"]
    raise InternalError(f"kernel printer: unknown statement {type(s).__name__}; please report")


def _block(body: tuple[ir.Stmt, ...], indent: str) -> list[str]:
    out: list[str] = []
    for s in body:
        out += stmt_lines(s, indent + "  ")
    return out


def kernel_to_text(k: ir.Kernel) -> str:
    """Return the canonical text of kernel ``k`` (ends with a newline)."""
    params = [f"{b.name}: {b.dtype}* {b.access}" for b in k.buffers]
    params += [f"{s.name}: {s.dtype}" for s in k.scalars]
    lines = [f"kernel {k.name}({', '.join(params)}) workgroup_size={k.workgroup_size} {{"]
    lines += [f"  shared {a.name}: {a.dtype}[{a.size_elems}]" for a in k.shared]
    for s in k.body:
        lines += stmt_lines(s)
    lines.append("}")
    return "\n".join(lines) + "\n"
