"""IEEE-correct float lowering where Vulkan drivers (lavapipe 22.3) answer differently.

:meth:`VulkanTarget.guarded_op` sends these ops here (every other op lowers as usual):

- ``add``/``mul``/``div`` with a literal ``+0.0`` operand. llvmpipe's code generator
  (gallivm ``lp_build_mul``/``lp_build_div``/``lp_build_add``) returns the other operand or
  0 for a constant-zero operand whatever the float controls say, so ``x * 0.0`` gave 0.0
  for NaN, ±inf and -0.0, ``0.0 / 0.0`` gave 0. Lowered with compares and selects, no
  arithmetic on the zero: ``x * 0 = finite(x) ? ±0 : NaN``, ``0 / y = (y == 0 or NaN) ?
  NaN : ±0``, ``x / 0 = (x == 0 or NaN) ? NaN : ±inf``, ``x + 0 = (x == 0) ? +0 : x``.
- f32 ``log``/``log2`` (and ``pow``): GLSL.std.450 ``Log`` reads a denormal's exponent
  field as -127 (``log(1e-40)`` gave -88.0, numpy -92.1). Inputs below ``FLT_MIN`` are
  scaled by 2^24 first and 24·ln 2 (24) subtracted after; negative, zero, inf and NaN
  inputs keep their IEEE answers (NaN, -inf, inf, NaN). Near 1 (0.78 < x < 1.28) an
  atanh series replaces ``Log``, whose relative error there reached 500 ulp.
- f32 ``exp``/``exp2``: ``Exp`` loses about |x| ulp and flushes denormal results to 0;
  reduced to ``Exp(r) · 2^n`` first (see :func:`_exp`).
- f32 ``tanh``: ``Tanh`` loses all precision near 0 (``tanh(1e-40)`` gave 3e-8) and the
  sign of -0.0. |x| < 0.25: odd Taylor polynomial to x^11 (error < 2^-30); else
  ``±(1 - e) / (1 + e)``, ``e = exp(-2|x|)`` (±1 for large |x|, NaN stays NaN).
- f32 ``pow``: GLSL ``Pow`` is undefined for x <= 0 and wrong for denormal x: C99/numpy
  special cases by selects around ``exp2(y · log2|x|)`` with the guarded log2/exp2
  (relative error about (2 + |y · log2 x|) ulp; exact for y = 1, 2, -1).

- f32 ``sin``/``cos`` of |x| > 2^18 (devices with f64 only): reduced modulo 2π in f64
  first; lavapipe's own reduction is fine to 1e6 and gives |sin x| > 1 near 1e8.

f64 needs none of the transcendental guards (they are refused on Vulkan; f64 sqrt is
exact). See ``docs/numerics.md``.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from accy.codegen.emitter import FunctionEmitter

__all__ = ["guarded_op"]

_FLT_MIN = 2.0**-126
_TANH_TAYLOR = (1.0, -1.0 / 3, 2.0 / 15, -17.0 / 315, 62.0 / 2835, -1382.0 / 155925)


class _B:
    """Tiny LLVM builder over a FunctionEmitter for one float type."""

    def __init__(self, em: FunctionEmitter, dtype: str) -> None:
        self.em, self.dtype = em, dtype
        self.t = "float" if dtype == "f32" else "double"
        self.sfx = dtype

    def c(self, v: float) -> str:
        return self.em.constant(v, self.dtype)

    def op(self, name: str, a: str, b: str) -> str:
        return self.em.value(f"{name} {self.t} {a}, {b}")

    def cmp(self, pred: str, a: str, b: str) -> str:
        return self.em.value(f"fcmp {pred} {self.t} {a}, {b}")

    def sel(self, cond: str, a: str, b: str) -> str:
        return self.em.value(f"select i1 {cond}, {self.t} {a}, {self.t} {b}")

    def both(self, a: str, b: str) -> str:
        return self.em.value(f"and i1 {a}, {b}")

    def either(self, a: str, b: str) -> str:
        return self.em.value(f"or i1 {a}, {b}")

    def call(self, fn: str, *args: str) -> str:
        return self.em.call(f"llvm.{fn}.{self.sfx}", self.t, [(self.t, a) for a in args])

    def negative(self, x: str) -> str:
        """Sign bit of ``x`` (``-0.0`` included): the bit itself for f32; for f64 (no
        64-bit integers needed) ``x < 0 or (x == 0 and 1 / x < 0)``, NaN aside."""
        if self.dtype == "f32":
            bits = self.em.value(f"bitcast float {x} to i32")
            return self.em.value(f"icmp slt i32 {bits}, 0")
        lt = self.cmp("olt", x, self.c(0.0))
        is_zero = self.cmp("oeq", x, self.c(0.0))
        inv_neg = self.cmp("olt", self.op("fdiv", self.c(1.0), x), self.c(0.0))
        return self.either(lt, self.both(is_zero, inv_neg))

    def signed(self, negative: str, magnitude: float) -> str:
        return self.sel(negative, self.c(-magnitude), self.c(magnitude))

    def negate_if(self, cond: str, v: str) -> str:
        """``cond ? -v : v`` as a multiply by ±1: LLVM 22's SPIR-V backend segfaults on
        ``select(fcmp olt x, 0.0, fneg m, m)`` (a GELU's tanh crashed the worker)."""
        return self.op("fmul", v, self.sel(cond, self.c(-1.0), self.c(1.0)))


def guarded_op(em: FunctionEmitter, op: str, args: list[str], dtype: str,
               f64: bool = False) -> str | None:
    """Return the guarded lowering of ``op`` on ``args`` (LLVM values), or None for the
    ordinary one (:mod:`accy.codegen.ops`); ``f64``: the device has f64 arithmetic."""
    if dtype not in ("f32", "f64"):
        return None
    b = _B(em, dtype)
    zero = b.c(0.0)
    if op in ("add", "mul", "div") and zero in args:
        return _zero_operand(b, op, args[0], args[1], zero)
    if dtype != "f32":
        return None
    if op in ("log", "log2"):
        return _log(b, op, args[0])
    if op in ("exp", "exp2"):
        return _exp(b, op, args[0])
    if op == "tanh":
        return _tanh(b, args[0])
    if op == "pow":
        return _pow(b, args[0], args[1])
    if op in ("sin", "cos") and f64:
        return _trig(b, op, args[0])
    return None


def _trig(b: _B, op: str, x: str) -> str:
    """sin/cos with |x| > 2^18 reduced modulo 2π in f64 first (lavapipe's own reduction
    gives |sin x| > 1 near 1e8); NaN and ±inf still give NaN."""
    em = b.em
    inv, half, two_pi = (em.constant(v, "f64") for v in (1 / (2 * math.pi), 0.5, 2 * math.pi))
    xd = em.value(f"fpext float {x} to double")
    turns = em.value(f"fadd double {em.value(f'fmul double {xd}, {inv}')}, {half}")
    k = em.call("llvm.floor.f64", "double", [("double", turns)])
    rd = em.value(f"fsub double {xd}, {em.value(f'fmul double {k}, {two_pi}')}")
    reduced = em.value(f"fptrunc double {rd} to float")
    big = b.cmp("ogt", b.call("fabs", x), b.c(2.0**18))
    return b.call(op, b.sel(big, reduced, x))


def _zero_operand(b: _B, op: str, x: str, y: str, zero: str) -> str:
    nan = b.c(math.nan)
    if x == zero and y == zero:  # both literal (constant folding normally removes these)
        return nan if op == "div" else zero
    if op == "add":
        other = y if x == zero else x
        return b.sel(b.cmp("oeq", other, zero), zero, other)
    if op == "mul":
        other = y if x == zero else x
        finite = b.cmp("olt", b.call("fabs", other), b.c(math.inf))
        return b.sel(finite, b.signed(b.negative(other), 0.0), nan)
    if x == zero:  # 0 / y
        return b.sel(b.cmp("ueq", y, zero), nan, b.signed(b.negative(y), 0.0))
    return b.sel(b.cmp("ueq", x, zero), nan, b.signed(b.negative(x), math.inf))  # x / 0


def _log(b: _B, op: str, x: str) -> str:
    tiny = b.cmp("olt", x, b.c(_FLT_MIN))
    scaled = b.sel(tiny, b.op("fmul", x, b.c(2.0**24)), x)
    r = b.call(op, scaled)
    shift = 24.0 * math.log(2.0) if op == "log" else 24.0
    r = b.sel(tiny, b.op("fsub", r, b.c(shift)), r)
    # near 1, Log (log2(x) · ln 2) has a small absolute but a large relative error:
    # log(x) = 2 atanh(s), s = (x - 1) / (x + 1), |s| < 0.12, series to s^9
    s = b.op("fdiv", b.op("fsub", x, b.c(1.0)), b.op("fadd", x, b.c(1.0)))
    s2 = b.op("fmul", s, s)
    series = b.c(1.0 / 9)
    for k in (7, 5, 3, 1):
        series = b.op("fadd", b.op("fmul", series, s2), b.c(1.0 / k))
    near = b.op("fmul", b.op("fmul", s, series), b.c(2.0 if op == "log" else 2.0 / math.log(2)))
    window = b.both(b.cmp("ogt", x, b.c(0.78)), b.cmp("olt", x, b.c(1.28)))
    return b.sel(window, near, r)


def _exp(b: _B, op: str, x: str) -> str:
    """exp/exp2 = ``Exp(r) · 2^n1 · 2^n2`` with ``x = n·ln 2 + r`` (Cody-Waite, |r| <= ln2/2).

    GLSL ``Exp`` is ``exp2(x · log2 e)``, whose rounded product costs about |x| ulp, and it
    flushes denormal results; ``2^n`` in two halves keeps ``exp(88.5)`` finite and lets
    the last multiply round denormal results.
    """
    if op == "exp":
        n = b.call("floor", b.op("fadd", b.op("fmul", x, b.c(1.0 / math.log(2.0))), b.c(0.5)))
        hi = b.op("fsub", x, b.op("fmul", n, b.c(0.693359375)))  # n * C1 is exact
        r = b.op("fsub", hi, b.op("fmul", n, b.c(math.log(2.0) - 0.693359375)))
    else:
        n = b.call("floor", b.op("fadd", x, b.c(0.5)))
        r = b.op("fsub", x, n)
    n1 = b.call("floor", b.op("fmul", n, b.c(0.5)))
    n2 = b.op("fsub", n, n1)
    e = b.op("fmul", b.op("fmul", b.call(op, r), b.call("exp2", n1)), b.call("exp2", n2))
    high, low = (89.0, -104.0) if op == "exp" else (128.0, -150.0)
    e = b.sel(b.cmp("ogt", x, b.c(high)), b.c(math.inf), e)  # (inf - inf = NaN inside)
    return b.sel(b.cmp("olt", x, b.c(low)), b.c(0.0), e)


def _tanh(b: _B, x: str) -> str:
    ax = b.call("fabs", x)
    x2 = b.op("fmul", x, x)
    poly = b.c(_TANH_TAYLOR[-1])
    for coef in reversed(_TANH_TAYLOR[:-1]):
        poly = b.op("fadd", b.op("fmul", poly, x2), b.c(coef))
    small = b.op("fmul", x, poly)
    e = b.call("exp", b.op("fmul", ax, b.c(-2.0)))  # in (0, 1]: no overflow
    mag = b.op("fdiv", b.op("fsub", b.c(1.0), e), b.op("fadd", b.c(1.0), e))
    # the sign of x by bits: select(x < 0.0, -m, m) crashes LLVM 22's SPIR-V backend
    # (segfault, or an assertion in SPIRVPreLegalizer) inside a GELU
    sign = b.em.value(f"and i32 {b.em.value(f'bitcast float {x} to i32')}, -2147483648")
    bits = b.em.value(f"or i32 {b.em.value(f'bitcast float {mag} to i32')}, {sign}")
    large = b.em.value(f"bitcast i32 {bits} to float")
    return b.sel(b.cmp("olt", ax, b.c(0.25)), small, large)


def _pow(b: _B, x: str, y: str) -> str:
    """C99 ``pow`` (numpy's): the cases of :func:`accy.passes.kernel_exprs._pow`."""
    zero, one, inf, nan = b.c(0.0), b.c(1.0), b.c(math.inf), b.c(math.nan)
    ax, ay = b.call("fabs", x), b.call("fabs", y)
    mag = _exp(b, "exp2", b.op("fmul", y, _log(b, "log2", ax)))
    for k, exact in ((1.0, ax), (2.0, b.op("fmul", ax, ax)),
                     (-1.0, b.op("fdiv", b.c(1.0), ax))):  # exact where numpy is
        mag = b.sel(b.cmp("oeq", y, b.c(k)), exact, mag)
    y_int = b.cmp("oeq", b.call("floor", y), y)
    half = b.op("fmul", y, b.c(0.5))
    y_odd = b.both(y_int, b.cmp("one", b.call("floor", half), half))
    x_zero = b.cmp("oeq", x, zero)
    flip = b.both(b.negative(x), y_odd)
    r = b.negate_if(flip, mag)
    finite_fraction = b.both(b.cmp("one", ax, inf), b.em.value(f"xor i1 {y_int}, true"))
    r = b.sel(b.both(b.cmp("olt", x, zero), finite_fraction), nan, r)
    at_zero = b.sel(b.cmp("olt", y, zero), inf, zero)
    r = b.sel(x_zero, b.negate_if(flip, at_zero), r)
    # |x| = inf: inf^y is inf (y > 0) or 0 (y < 0), signed for odd y (through ``flip``)
    x_inf = b.cmp("oeq", ax, inf)
    at_inf = b.sel(b.cmp("ogt", y, zero), inf, zero)
    r = b.sel(x_inf, b.negate_if(flip, at_inf), r)
    # |y| = inf: |x| < 1 gives 0 (y = +inf) or inf (y = -inf), |x| > 1 the other way
    y_inf = b.cmp("oeq", ay, inf)
    grows = b.em.value(f"xor i1 {b.cmp('olt', ax, one)}, {b.cmp('ogt', y, zero)}")
    r = b.sel(b.both(y_inf, b.cmp("one", ax, one)), b.sel(grows, inf, zero), r)
    # NaN test as x != x: OpUnordered needs the Kernel capability
    r = b.sel(b.either(b.cmp("une", x, x), b.cmp("une", y, y)), nan, r)
    unit = b.either(b.cmp("oeq", x, one), b.both(b.cmp("oeq", ax, one), y_inf))
    r = b.sel(unit, one, r)
    return b.sel(b.cmp("oeq", y, zero), one, r)
