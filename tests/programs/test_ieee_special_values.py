"""IEEE special values through every elementwise op, on every backend, against numpy.

Inputs: ±0, ±1, ±inf, NaN, ±denormals, the largest finite values, tiny normals and a few
ordinary values, every pair for binary ops. Rules (``docs/numerics.md``): NaN exactly where
numpy gives NaN, infinities and the sign of zero exactly (except ``max``/``min`` of +0 and
-0, where IEEE lets either zero be returned), correctly rounded ops bit for bit, math
functions within a few ulp; denormal results within a few denormal steps.

On Vulkan these failed before: ``x - x``, ``x * 0``, ``0 / y`` and ``exp(log x)`` gave 0
for inf, NaN and -0.0 (lavapipe folds without float-controls modes, llvmpipe short-cuts
constant zeros), ``log`` of a denormal read its exponent as -127, ``tanh`` of tiny values
gave 3e-8.
"""

from __future__ import annotations

import accy
import accy.numpy as anp
import numpy as np
import pytest
from accy.errors import CapabilityError

NP = {"f32": np.float32, "f64": np.float64}


def special(dtype: str) -> np.ndarray:
    t = NP[dtype]
    fi = np.finfo(t)
    denorm = float(fi.smallest_subnormal) * 1000
    vals = [0.0, -0.0, 1.0, -1.0, 0.5, -2.5, 2.0, 3.0, 100.0, -100.0, np.inf, -np.inf,
            np.nan, denorm, -denorm, float(fi.smallest_subnormal), float(fi.tiny),
            float(fi.max), -float(fi.max), 1e-3, 89.0, -89.0, 0.1]
    return np.array(vals, dtype=t)


BINARY = {
    "add": (lambda a, b: a + b, np.add),
    "sub": (lambda a, b: a - b, np.subtract),
    "mul": (lambda a, b: a * b, np.multiply),
    "div": (lambda a, b: a / b, np.divide),
    "max": (anp.maximum, np.maximum),
    "min": (anp.minimum, np.minimum),
    "pow": (lambda a, b: a**b, np.power),
    "x-x": (lambda a, b: a - a, lambda a, b: a - a),
    "x*0": (lambda a, b: a * 0.0, lambda a, b: a * a.dtype.type(0.0)),
    "0/y": (lambda a, b: 0.0 / b, lambda a, b: b.dtype.type(0.0) / b),
    "y/0": (lambda a, b: b / 0.0, lambda a, b: b / b.dtype.type(0.0)),
    "0+y": (lambda a, b: 0.0 + b, lambda a, b: b.dtype.type(0.0) + b),
    "x*a+b": (lambda a, b: a * b + a, lambda a, b: a * b + a),
}
COMPARE = {"eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal,
           "gt": np.greater, "ge": np.greater_equal}
UNARY = {
    "neg": (np.negative, 0), "abs": (np.abs, 0), "sqrt": (np.sqrt, 0),
    "exp": (np.exp, 4), "log": (np.log, 4), "tanh": (np.tanh, 4), "sin": (np.sin, 4),
    "cos": (np.cos, 4), "rsqrt": (lambda x: 1 / np.sqrt(x), 2),
    "sigmoid": (lambda x: 1 / (1 + np.exp(-x)), 8),
    "exp(log)": (lambda x: np.exp(np.log(x)), 8),
}
#: numpy's ufuncs, for the traced program
_ANP_UNARY = {"neg": anp.negative, "abs": anp.abs, "sqrt": anp.sqrt, "exp": anp.exp,
              "log": anp.log, "tanh": anp.tanh, "sin": anp.sin, "cos": anp.cos,
              "rsqrt": lambda x: 1.0 / anp.sqrt(x),
              "sigmoid": lambda x: 1.0 / (1.0 + anp.exp(-x)),
              "exp(log)": lambda x: anp.exp(anp.log(x))}
_ULP_OPS = {"pow": 8, "x*a+b": 0}
#: sin/cos beyond this |x|: only |result| <= 1 is promised (docs/numerics.md)
_HUGE_TRIG = 1e9


def mismatches(got: np.ndarray, want: np.ndarray, ulps: int,
               zero_sign: bool = True) -> np.ndarray:
    """Mask of elements where ``got`` breaks the rules above for ``want``."""
    got = np.asarray(got)
    want = want.astype(got.dtype)
    g64, w64 = got.astype(np.float64), want.astype(np.float64)
    bad = np.isnan(got) != np.isnan(want)
    inf = np.isinf(want)
    bad |= inf & (g64 != w64)
    zero = want == 0
    bad |= zero & (got != 0)
    if zero_sign:
        bad |= zero & (np.signbit(got) != np.signbit(want))
    rest = ~(inf | zero | np.isnan(want))
    fi = np.finfo(got.dtype)
    if np.all(ulps == 0):  # correctly rounded: bit for bit
        return bad | (rest & (g64 != w64))
    below_max = np.nextafter(fi.max, fi.dtype.type(0))  # spacing(max) is inf
    mag = np.minimum(np.abs(want), below_max).astype(got.dtype)
    allowed = np.spacing(mag).astype(np.float64) * ulps + float(fi.smallest_subnormal) * 4
    with np.errstate(invalid="ignore"):
        bad |= rest & ~(np.abs(g64 - w64) <= allowed)
    return bad


def check(name: str, got, want: np.ndarray, ulps: int, *inputs: np.ndarray,
          zero_sign: bool = True) -> None:
    bad = mismatches(got, want, ulps, zero_sign)
    if bad.any():
        idx = np.nonzero(bad)[0][:6]
        cases = [(tuple(float(x[i]) for x in inputs), float(np.asarray(got)[i]),
                  float(want[i])) for i in idx]
        raise AssertionError(f"{name}: {int(bad.sum())} wrong (inputs, got, numpy): {cases}")


@pytest.mark.parametrize("dtype", ["f32", "f64"])
def test_binary_ops_on_special_pairs(backend, dtype):
    s = special(dtype)
    a, b = np.repeat(s, len(s)), np.tile(s, len(s))
    names = list(BINARY)
    if dtype == "f64":
        names.remove("pow")  # f64 pow: refused on Vulkan, libm elsewhere (covered by golden)

    def program(x, y):
        return tuple(BINARY[n][0](x, y) for n in names)

    got = accy.jit(program, backend=backend)(a, b)
    with np.errstate(all="ignore"):
        for n, g in zip(names, got, strict=True):
            ulps = _ULP_OPS.get(n, 0)
            if n == "pow":  # exp2(y log2 x): the rounding of y log2 x scales the error
                t = np.abs(b.astype(np.float64) * np.log2(np.abs(a.astype(np.float64))))
                ulps = ulps + 2 * np.nan_to_num(t, posinf=0.0)
            check(n, g, BINARY[n][1](a, b), ulps, a, b, zero_sign=n not in ("max", "min"))


@pytest.mark.parametrize("dtype", ["f32", "f64"])
def test_compares_on_special_pairs(backend, dtype):
    s = special(dtype)
    a, b = np.repeat(s, len(s)), np.tile(s, len(s))
    b_ = accy.Builder()
    t = b_.tensor(dtype, a.shape)
    fb = b_.begin_function("cmp", params=[t, t])
    x, y = fb.param(0), fb.param(1)
    outs = [fb._one(f"arith.{c}", [x, y]) for c in COMPARE]  # noqa: SLF001
    outs.append(fb.select(fb._one("arith.lt", [x, y]), x, y))  # noqa: SLF001
    fb.return_(*outs)
    fb.finish()
    got = accy.compile(b_.finish(), backend=backend)(a, b)
    for (c, ref), g in zip(COMPARE.items(), got, strict=False):
        np.testing.assert_array_equal(g, ref(a, b), err_msg=c)
    check("select", got[-1], np.where(a < b, a, b), 0, a, b)


@pytest.mark.parametrize("dtype", ["f32", "f64"])
def test_unary_ops_on_special_values(backend, dtype):
    s = special(dtype)
    names = list(UNARY)

    def program(x):
        return tuple(_ANP_UNARY[n](x) for n in names)

    try:
        got = accy.jit(program, backend=backend)(s)
    except CapabilityError as e:
        if dtype == "f64":
            names = ["neg", "abs", "sqrt", "rsqrt"]  # no f64 transcendentals on this backend
            got = accy.jit(lambda x: tuple(_ANP_UNARY[n](x) for n in names),
                           backend=backend)(s)
        else:
            raise AssertionError(f"f32 math refused: {e}") from e
    with np.errstate(all="ignore"):
        for n, g in zip(names, got, strict=True):
            fn, ulps = UNARY[n]
            w = fn(s)
            keep = np.ones(len(s), bool)
            if n == "exp(log)":  # exp amplifies log's rounding by |log x|: near the
                keep = np.abs(s) < np.finfo(s.dtype).max / 2  # top, 1 ulp overflows
                ulps = ulps + 2 * np.nan_to_num(np.abs(np.log(np.abs(s[keep]))), posinf=0.0)
            if n in ("sin", "cos"):
                keep = ~(np.abs(s) > _HUGE_TRIG)
                assert np.all(np.abs(np.asarray(g)[~keep & np.isfinite(s)]) <= 1)
            check(n, np.asarray(g)[keep], w[keep], ulps, s[keep])


ACCURACY = {  # op: (accy, numpy, inputs, ulps)
    "exp": (anp.exp, np.exp, np.linspace(-103.5, 88.7, 40001), 4),
    "log": (anp.log, np.log, np.concatenate([np.geomspace(1e-44, 3e38, 30001),
                                             np.linspace(0.7, 1.4, 10001)]), 4),
    "tanh": (anp.tanh, np.tanh, np.concatenate([np.linspace(-12, 12, 30001),
                                                np.geomspace(1e-40, 1.0, 10001)]), 6),
    "sin": (anp.sin, np.sin, np.concatenate([np.linspace(-30, 30, 20001),
                                             np.geomspace(1.0, 1e8, 20001)]), -1),
    "cos": (anp.cos, np.cos, np.concatenate([np.linspace(-30, 30, 20001),
                                             np.geomspace(1.0, 1e8, 20001)]), -1),
    "sqrt": (anp.sqrt, np.sqrt, np.geomspace(1e-44, 3e38, 40001), 0),
}


@pytest.mark.parametrize("name", list(ACCURACY))
def test_f32_math_accuracy_over_its_range(backend, name):
    """Ordinary inputs, including denormals and arguments up to 1e8, within a few ulp of
    numpy's correctly rounded float64 answer (sin/cos: absolute error 2^-22)."""
    fn, ref, xs, ulps = ACCURACY[name]
    x = xs.astype(np.float32)
    got = np.asarray(accy.jit(fn, backend=backend)(x)).astype(np.float64)
    want = ref(x.astype(np.float64))
    if ulps < 0:
        err = np.abs(got - want)
        assert err.max() <= 2.0**-22, f"{name}: abs error {err.max()} at {x[np.argmax(err)]}"
        return
    check(name, got.astype(np.float32), want.astype(np.float32), max(ulps, 1), x)
