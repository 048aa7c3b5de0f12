"""Lower kernel-IR unary, binary and cast ops on LLVM values (used by the function emitter).

Semantics match :mod:`accy.kernel.interpreter`: integer ``div``/``rem`` never trap (a zero
divisor, and ``MIN / -1`` for signed types, divide by 1 instead), shift amounts are masked to
the bit width, float → int conversions saturate (NaN → 0; ``accy.numerics``), float
``min``/``max`` are ``llvm.minnum``/``llvm.maxnum`` and ``ne`` on floats is unordered.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from accy.codegen.target import llvm_type
from accy.errors import InternalError
from accy.kernel.ir import UNSIGNED_DTYPES as _UNSIGNED

if TYPE_CHECKING:
    from accy.codegen.emitter import FunctionEmitter

__all__ = ["binary", "cast", "fma", "unary"]

_ICMP_S = {"eq": "eq", "ne": "ne", "lt": "slt", "le": "sle", "gt": "sgt", "ge": "sge"}
_ICMP_U = {"eq": "eq", "ne": "ne", "lt": "ult", "le": "ule", "gt": "ugt", "ge": "uge"}
_FCMP = {"eq": "oeq", "ne": "une", "lt": "olt", "le": "ole", "gt": "ogt", "ge": "oge"}
_FLOAT = {"f32", "f64"}
_BITS = {"i32": 32, "u32": 32, "i64": 64, "bool": 1, "f32": 32, "f64": 64, "i8": 8, "u8": 8,
         "i16": 16, "u16": 16, "u64": 64}


def _suffix(dtype: str) -> str:
    return {"f32": "f32", "f64": "f64", "bool": "i1"}.get(dtype, f"i{_BITS[dtype]}")


def unary(em: FunctionEmitter, op: str, x: str, dtype: str) -> str:
    """Emit ``op(x)`` for a value of ``dtype`` and return the result value."""
    t = llvm_type(dtype)
    if op == "neg":
        return em.value(f"fneg {t} {x}" if dtype in _FLOAT else f"sub {t} 0, {x}")
    if op == "not":
        return em.value(f"xor {t} {x}, {'true' if dtype == 'bool' else -1}")
    if op == "abs":
        if dtype in _FLOAT:
            return em.call(f"llvm.fabs.{_suffix(dtype)}", t, [(t, x)])
        if dtype in _UNSIGNED:
            return x
        return em.call(f"llvm.abs.{_suffix(dtype)}", t, [(t, x), ("i1", "false")])
    if op == "rsqrt":
        s = unary(em, "sqrt", x, dtype)
        return em.value(f"fdiv {t} {em.constant(1.0, dtype)}, {s}")
    guarded = _guarded(em, op, [x], dtype)
    if guarded is not None:
        return guarded
    callee = em.target.math_function(op, dtype)
    if callee is None:
        raise InternalError(
            f"codegen: target {em.target.name!r} gave no lowering for {op!r} "
            f"on {dtype}; its legalize() should have rejected it; please report"
        )
    return em.call(callee, t, [(t, x)])


def _guarded(em: FunctionEmitter, op: str, args: list[str], dtype: str) -> str | None:
    """The target's own lowering of a float op (``guarded_op`` hook), or None."""
    hook = getattr(em.target, "guarded_op", None)
    return None if hook is None else hook(em, op, args, dtype)


def binary(em: FunctionEmitter, op: str, a: str, b: str, dtype: str) -> str:  # noqa: C901 - one case per op
    """Emit ``op(a, b)`` with operands of ``dtype``; compares return i1."""
    t = llvm_type(dtype)
    is_float = dtype in _FLOAT
    if op in _FCMP:
        if is_float:
            return em.value(f"fcmp {_FCMP[op]} {t} {a}, {b}")
        table = _ICMP_U if dtype in _UNSIGNED or dtype == "bool" else _ICMP_S
        return em.value(f"icmp {table[op]} {t} {a}, {b}")
    if is_float:
        guarded = _guarded(em, op, [a, b], dtype)
        if guarded is not None:
            return guarded
    simple = {"add": "add", "sub": "sub", "mul": "mul", "and": "and", "or": "or", "xor": "xor"}
    if op in ("add", "sub", "mul") and is_float:
        return em.value(f"f{op} {t} {a}, {b}")
    if op in simple:
        return em.value(f"{simple[op]} {t} {a}, {b}")
    if op in ("div", "rem"):
        if is_float:
            return em.value(f"f{op} {t} {a}, {b}")
        return _int_divrem(em, op, a, b, dtype)
    if op in ("min", "max"):
        if is_float:
            name = "minnum" if op == "min" else "maxnum"
            return em.call(f"llvm.{name}.{_suffix(dtype)}", t, [(t, a), (t, b)])
        if dtype == "bool":
            return em.value(f"{'and' if op == 'min' else 'or'} i1 {a}, {b}")
        sign = "u" if dtype in _UNSIGNED else "s"
        return em.call(f"llvm.{sign}{op}.{_suffix(dtype)}", t, [(t, a), (t, b)])
    if op == "pow":
        return em.call(em.target.math_function("pow", dtype) or "", t, [(t, a), (t, b)])
    if op in ("shl", "shr"):
        amount = em.value(f"and {t} {b}, {_BITS[dtype] - 1}")
        llvm_op = "shl" if op == "shl" else ("lshr" if dtype in _UNSIGNED else "ashr")
        return em.value(f"{llvm_op} {t} {a}, {amount}")
    if op == "mulhi":
        ext = "zext" if dtype in _UNSIGNED else "sext"
        wa, wb = em.value(f"{ext} i32 {a} to i64"), em.value(f"{ext} i32 {b} to i64")
        product = em.value(f"mul i64 {wa}, {wb}")
        return em.value(f"trunc i64 {em.value(f'lshr i64 {product}, 32')} to i32")
    raise InternalError(f"codegen: unknown binary op {op!r}; please report")


def fma(em: FunctionEmitter, a: str, b: str, x: str, dtype: str) -> str:
    """Emit ``a * b + x``: ``llvm.fmuladd`` on floats (fused where the target has FMA),
    wrapping ``mul``/``add`` on integers."""
    t = llvm_type(dtype)
    if dtype in _FLOAT:
        return em.call(f"llvm.fmuladd.{_suffix(dtype)}", t, [(t, a), (t, b), (t, x)])
    return em.value(f"add {t} {em.value(f'mul {t} {a}, {b}')}, {x}")


def _int_divrem(em: FunctionEmitter, op: str, a: str, b: str, dtype: str) -> str:
    t = llvm_type(dtype)
    zero = em.value(f"icmp eq {t} {b}, 0")
    if dtype in _UNSIGNED:
        bad = zero
    else:
        minimum = str(-(1 << (_BITS[dtype] - 1)))
        is_min = em.value(f"icmp eq {t} {a}, {minimum}")
        is_m1 = em.value(f"icmp eq {t} {b}, -1")
        bad = em.value(f"or i1 {zero}, {em.value(f'and i1 {is_min}, {is_m1}')}")
    safe = em.value(f"select i1 {bad}, {t} 1, {t} {b}")
    sign = "u" if dtype in _UNSIGNED else "s"
    return em.value(f"{sign}{op} {t} {a}, {safe}")


def _saturate_by_selects(em: FunctionEmitter, x: str, source: str, dtype: str,
                         sign: str) -> str:
    """``llvm.fpto[su]i.sat`` open-coded: clamp to the range, NaN → 0 (for targets whose
    translation of the intrinsic is invalid, e.g. SPIR-V's Kernel-only SaturatedConversion)."""
    ts, td = llvm_type(source), llvm_type(dtype)
    bits = _BITS[dtype]
    lo, hi = (0.0, 2.0**bits) if sign == "u" else (-(2.0 ** (bits - 1)), 2.0 ** (bits - 1))
    imin, imax = (0, 2**bits - 1) if sign == "u" else (-(2 ** (bits - 1)), 2 ** (bits - 1) - 1)
    raw = em.value(f"fpto{sign}i {ts} {x} to {td}")  # poison out of range: never selected
    over = em.value(f"fcmp oge {ts} {x}, {em.constant(hi, source)}")
    under = em.value(f"fcmp {'ole' if sign == 'u' else 'olt'} {ts} {x}, "
                     f"{em.constant(-1.0 if sign == 'u' else lo, source)}")
    nan = em.value(f"fcmp une {ts} {x}, {x}")  # not "uno": Kernel-only in SPIR-V
    r = em.value(f"select i1 {over}, {td} {em.constant(imax, dtype)}, {td} {raw}")
    r = em.value(f"select i1 {under}, {td} {em.constant(imin, dtype)}, {td} {r}")
    return em.value(f"select i1 {nan}, {td} 0, {td} {r}")


def cast(em: FunctionEmitter, x: str, source: str, dtype: str) -> str:
    """Emit the numeric conversion of ``x`` from ``source`` to ``dtype``."""
    if source == dtype or (_BITS[source] == _BITS[dtype] and source not in _FLOAT
                           and dtype not in _FLOAT and "bool" not in (source, dtype)):
        return x  # same width, signedness only: the same bits
    ts, td = llvm_type(source), llvm_type(dtype)
    if dtype == "bool":
        if source in _FLOAT:
            return em.value(f"fcmp une {ts} {x}, {em.constant(0.0, source)}")
        return em.value(f"icmp ne {ts} {x}, 0")
    if source in _FLOAT and dtype in _FLOAT:
        return em.value(f"{'fpext' if dtype == 'f64' else 'fptrunc'} {ts} {x} to {td}")
    if source in _FLOAT:
        sign = "u" if dtype in _UNSIGNED else "s"
        if not getattr(em.target, "saturating_casts", True):
            return _saturate_by_selects(em, x, source, dtype, sign)
        callee = f"llvm.fpto{sign}i.sat.{_suffix(dtype)}.{_suffix(source)}"
        return em.call(callee, td, [(ts, x)])
    if dtype in _FLOAT:
        conv = "uitofp" if source in _UNSIGNED or source == "bool" else "sitofp"
        return em.value(f"{conv} {ts} {x} to {td}")
    if _BITS[source] > _BITS[dtype]:
        return em.value(f"trunc {ts} {x} to {td}")
    if source in _UNSIGNED or source == "bool":
        return em.value(f"zext {ts} {x} to {td}")
    return em.target.sign_extend(em, x, ts, td)

