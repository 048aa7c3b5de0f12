"""The fuzzer's oracle: each op's numpy ``reference`` plus a rigorous error bound.

Every value carries, per element, a bound ``err`` on how far any correct evaluation may be
from the reference (float64; ``inf`` = undetermined). The comparison rules:

- Exact IEEE ops (``add sub mul div neg abs max min select``, float↔float casts, int↔float
  casts) on exact operands are correctly rounded on every backend: ``err = 0``, and the
  backend must give the reference's bits (NaN equals NaN; the sign of zero is not compared,
  since IEEE leaves ``max``/``min`` of ±0 open — a sign that matters reaches an output as
  ±inf and is compared there).
- Inexact operands propagate first-order bounds plus one rounding; a bound that reaches the
  overflow threshold, a domain edge (``log``/``sqrt`` near 0, a divisor interval holding 0)
  or a non-finite value becomes ``inf``.
- Transcendentals (``exp log sqrt rsqrt tanh sigmoid sin cos gelu pow``) may differ by
  ``R·(|f(x)| + |x·f'(x)|) + A`` (``R`` = 64 ulp of f32 / 2^-40 for f64, ``A`` = 4 × the
  smallest normal): the argument term is the error a one-ulp change of ``x`` causes, which
  also covers range reduction of huge arguments and Vulkan's ``3 + 2|x|`` ulp ``exp``.
- Sums, means and matmuls may be evaluated in any order: ``err = n·u/(1-n·u)·Σ|x|``
  (zero when every term is an integer-valued float and the sum fits the mantissa).
- Integers wrap (two's complement) and follow accy's documented ``div`` (truncate, ``x/0 ==
  0``, ``INT_MIN/-1`` wraps): exact. A float → int cast of NaN or an out-of-range value is
  documented as unspecified: undetermined, as is any integer derived from an undetermined
  comparison, cast or sort order.
"""

from __future__ import annotations

import numpy as np
from accy.ir import Module, get_op_def

MOVES = {"tensor.broadcast_to", "tensor.reshape", "tensor.transpose", "tensor.slice",
         "tensor.pad"}
_R = {"f32": 2.0 ** -17, "f64": 2.0 ** -40}
INF = np.inf


def _info(v: np.ndarray):
    return np.finfo(v.dtype) if v.dtype.kind == "f" else None


def _u(v: np.ndarray) -> float:
    return float(np.finfo(v.dtype).eps) / 2 if v.dtype.kind == "f" else 0.0


def _smul(x: np.ndarray, e: np.ndarray) -> np.ndarray:
    """|x|·e with 0·inf = 0 where e is 0."""
    with np.errstate(all="ignore"):
        return np.where(e > 0, np.abs(x.astype(np.float64)) * e, 0.0)


def _finish(out: np.ndarray, e: np.ndarray) -> np.ndarray:
    """Undetermined where a non-finite value is inexact or an inexact one may overflow (or
    where a rule's arithmetic on non-finite values gave a NaN bound)."""
    e = np.broadcast_to(np.asarray(e, dtype=np.float64), out.shape).copy()
    e[np.isnan(e)] = INF
    if out.dtype.kind != "f":
        return np.where(e > 0, INF, 0.0)
    fmax = float(_info(out).max)
    o = out.astype(np.float64)
    with np.errstate(all="ignore"):
        bad = (e > 0) & (~np.isfinite(o) | (np.abs(o) + e >= fmax))
    e[bad] = INF
    return e


def _unk(*es: np.ndarray) -> np.ndarray:
    return np.where(np.any([(e > 0) | np.isnan(e) for e in es], axis=0), INF, 0.0)


def _rounded(e: np.ndarray, out: np.ndarray) -> np.ndarray:
    with np.errstate(all="ignore"):
        return np.where(e > 0, e + _u(out) * np.abs(out.astype(np.float64)), 0.0)


def _binary(name: str, a, b, ea, eb, out):
    if out.dtype.kind != "f" or a.dtype.kind != "f":
        if name in ("eq", "ne", "lt", "le", "gt", "ge") and a.dtype.kind == "f":
            with np.errstate(all="ignore"):
                gap = np.abs(a.astype(np.float64) - b.astype(np.float64))
                close = (ea + eb > 0) & ~(gap > ea + eb)
            return np.where(close, INF, 0.0)
        return _unk(ea, eb)
    if name in ("add", "sub"):
        return _rounded(ea + eb, out)
    if name == "mul":
        return _rounded(_smul(a, eb) + _smul(b, ea) + ea * eb, out)
    if name == "div":
        with np.errstate(all="ignore"):
            room = np.abs(b.astype(np.float64)) - eb
            e = np.where((ea + eb) > 0, (ea + _smul(out, eb)) / room, 0.0)
            e = np.where((ea + eb > 0) & (room <= 0), INF, e)
        return _rounded(e, out)
    if name in ("max", "min"):
        return np.maximum(ea, eb)
    if name == "pow":
        return _pow(a, b, ea, eb, out)
    raise AssertionError(f"oracle: no rule for arith.{name}")


def _pow(a, b, ea, eb, out):
    o, x, y = (v.astype(np.float64) for v in (out, a, b))
    r = _R[out.dtype.name.replace("float", "f")]
    with np.errstate(all="ignore"):
        e = r * np.abs(o) * (1 + np.abs(y) + np.abs(y * np.log(np.abs(x)))) + _tiny(out)
    e = np.where(np.isfinite(o), np.nan_to_num(e, nan=INF), 0.0)
    return np.where((ea + eb) > 0, INF, e)


def _tiny(v: np.ndarray) -> float:
    return 4 * float(_info(v).tiny)


def _derivs(name: str, x: np.ndarray, o: np.ndarray):
    """|f'(x)| and the argument term |x·f'(x)| of a transcendental (float64)."""
    ax = np.abs(x)
    table = {
        "exp": lambda: (np.exp(x), ax * np.exp(x)),
        "log": lambda: (1 / ax, np.ones_like(x)),
        "sqrt": lambda: (0.5 / np.sqrt(ax), 0.5 * np.sqrt(ax)),
        "rsqrt": lambda: (0.5 * ax ** -1.5, 0.5 * np.abs(o)),
        "tanh": lambda: (1 - o * o, ax * (1 - o * o)),
        "sigmoid": lambda: (o * (1 - o), ax * o * (1 - o)),
        "sin": lambda: (np.ones_like(x), ax),
        "cos": lambda: (np.ones_like(x), ax),
        "gelu": lambda: (np.full_like(x, 1.2), 1.2 * ax),
    }
    return table[name]()


def _transcendental(name: str, x_: np.ndarray, ex, out: np.ndarray) -> np.ndarray:
    x, o = x_.astype(np.float64), out.astype(np.float64)
    r = _R[out.dtype.name.replace("float", "f")]
    with np.errstate(all="ignore"):
        d, xd = _derivs(name, x, o)
        e = np.where(ex > 0, d * ex, 0.0) + r * (np.abs(o) + xd) + _tiny(out)
        e = np.nan_to_num(e, nan=INF)
        if name in ("log", "sqrt", "rsqrt"):
            e = np.where((ex > 0) & (x - ex <= 0), INF, e)
        # non-finite results: exact when the argument is exact and far from overflow
        o64 = _f64_reference(name, x)
        edge = np.isfinite(o64) & (np.abs(o64) > float(_info(out).max) * 0.999)
        e = np.where(~np.isfinite(o), np.where((ex > 0) | edge, INF, 0.0), e)
    return e


def _f64_reference(name: str, x: np.ndarray) -> np.ndarray:
    opname = "nn.gelu" if name == "gelu" else f"math.{name}"
    with np.errstate(all="ignore"):
        return np.asarray(get_op_def(opname).reference([x], {})[0], dtype=np.float64)


def _cast(x: np.ndarray, ex, out: np.ndarray) -> np.ndarray:
    if x.dtype.kind != "f":
        return _unk(ex)
    if out.dtype.kind == "f":
        return _rounded(ex, out)
    xf = x.astype(np.float64)
    with np.errstate(all="ignore"):
        if out.dtype == np.bool_:
            return np.where((ex > 0) & (np.abs(xf) <= ex), INF, 0.0)
        info = np.iinfo(out.dtype)
        bad = ~np.isfinite(xf) | (xf <= float(info.min) - 1) | (xf >= float(info.max) + 1)
        bad |= (ex > 0) & (np.trunc(xf - ex) != np.trunc(xf + ex))
    return np.where(bad, INF, 0.0)


def _axes(attrs, rank):
    return tuple(a % rank for a in attrs["axes"]) if rank else ()


def _integral_sum_ok(x: np.ndarray, mag: np.ndarray) -> bool:
    """Every term an integer and every partial sum exactly representable."""
    xf = x.astype(np.float64)
    fin = np.isfinite(xf)
    limit = 2.0 ** (np.finfo(x.dtype).nmant + 1)
    return bool(np.all(xf[fin] == np.round(xf[fin])) and np.all(mag <= limit))


def _reduce(kind: str, x, ex, out, attrs):
    axes, keep = _axes(attrs, x.ndim), True
    n = int(np.prod([x.shape[a] for a in axes], dtype=np.int64))

    def red(fn, v):
        r = fn(v, axis=axes, keepdims=keep, initial=0.0) if axes else v
        return r if attrs.get("keepdims") else np.reshape(r, out.shape)

    if x.dtype.kind != "f":
        return red(np.max, _unk(ex)) if n else np.zeros(out.shape)
    if kind in ("max", "min"):
        return red(np.max, ex)
    xf = x.astype(np.float64)
    with np.errstate(all="ignore"):
        mag = red(np.sum, np.where(np.isfinite(xf), np.abs(xf), 0.0))
        u = _u(x)
        gamma = n * u / (1 - n * u)
        e = red(np.sum, ex) + (0.0 if _integral_sum_ok(x, mag) and not ex.any()
                               else gamma * mag)
        if kind == "mean":
            e = e / max(n, 1) + 2 * u * np.abs(out.astype(np.float64))
        fmax = float(np.finfo(x.dtype).max)
        exact_specials = (red(np.max, ex) == 0) & (mag < fmax)
        e = np.where(np.isfinite(out), np.where(mag >= fmax, INF, e),
                     np.where(exact_specials, 0.0, INF))
    return e


def _matmul(a, b, ea, eb, out, attrs):
    if (tuple(attrs["lhs_contracting"]), tuple(attrs["rhs_contracting"])) != ((1,), (0,)) or \
            attrs["lhs_batch"] or a.ndim != 2:
        raise AssertionError(f"oracle: unsupported dot_general {attrs}")
    if out.dtype.kind != "f":
        ua, ub = (ea > 0).any(axis=1), (eb > 0).any(axis=0)
        return np.where(ua[:, None] | ub[None, :], INF, 0.0)
    af, bf = (np.where(np.isfinite(v), np.abs(v.astype(np.float64)), 0.0) for v in (a, b))
    k = a.shape[1]
    u = _u(out)
    with np.errstate(all="ignore"):
        mag = af @ bf
        exact = not (ea.any() or eb.any())
        integral = exact and _integral_sum_ok(np.concatenate([a.ravel(), b.ravel()]), mag)
        e = af @ eb + ea @ bf + ea @ eb + (0.0 if integral else k * u / (1 - k * u) * mag)
        fmax = float(np.finfo(out.dtype).max)
        e = np.where(np.isfinite(out), np.where(mag >= fmax, INF, e),
                     np.where(exact & (mag < fmax), 0.0, INF))
    return e


def _softmax(x, ex, out, attrs):
    axis = attrs["axis"] % x.ndim
    if x.size == 0:
        return np.zeros(out.shape)
    xf, o = x.astype(np.float64), out.astype(np.float64)
    n = x.shape[axis]
    r, u = _R[out.dtype.name.replace("float", "f")], _u(out)
    with np.errstate(all="ignore"):
        shift = xf - np.max(xf, axis=axis, keepdims=True)
        spread = np.max(np.where(np.isfinite(shift), np.abs(shift), 0.0), axis=axis,
                        keepdims=True, initial=0.0)
        worst = np.max(ex, axis=axis, keepdims=True, initial=0.0)
        e = 2 * o * worst + o * (r * (1 + spread) + n * u / (1 - n * u) + 2 * u) + _tiny(out)
        e = np.where(np.isfinite(o), e, np.where(worst > 0, INF, 0.0))
    return np.nan_to_num(e, nan=INF)


def _row_determined(x: np.ndarray, e: np.ndarray) -> bool:
    """Every pair in the row is ordered the same way by any evaluation within ``e``."""
    if not e.any():
        return True
    if not np.all(np.isfinite(e)):
        return False
    xf = x.astype(np.float64)
    with np.errstate(all="ignore"):
        gap = np.abs(xf[:, None] - xf[None, :])
        need = e[:, None] + e[None, :]
    off = ~np.eye(len(xf), dtype=bool)
    return bool(np.all(~off | (gap > need) | ((need == 0) & (gap == 0)) | np.isnan(gap)
                       & (need == 0)))


def _sort(name: str, x, ex, out, attrs):
    axis = attrs["axis"] % x.ndim
    xm, em = np.moveaxis(x, axis, -1), np.moveaxis(ex, axis, -1)
    res = np.zeros(em.shape)
    for idx in np.ndindex(*xm.shape[:-1]):
        row_x, row_e = xm[idx], em[idx]
        if name == "sort" and x.dtype.kind == "f":
            res[idx] = row_e.max(initial=0.0)
        elif not _row_determined(row_x, row_e):
            res[idx] = INF
    return np.moveaxis(res, -1, axis)


_ELEMENTWISE_EXACT = {"neg", "abs", "relu", "not"}


def _rule(op, xs, es, out):  # noqa: C901 - one case per op family
    name = op.name
    kind = name.split(".", 1)[1]
    if name in MOVES:  # the error moves with the data; padding is exact
        attrs = dict(op.attrs, value=0.0) if name == "tensor.pad" else dict(op.attrs)
        return get_op_def(name).reference([es[0]], attrs)[0]
    if name in ("tensor.constant", "tensor.iota"):
        return np.zeros(out.shape)
    if name in ("arith.neg", "arith.abs", "arith.not", "nn.relu"):
        return es[0]
    if name == "arith.select":
        return np.where(es[0] > 0, INF, np.where(xs[0], es[1], es[2]))
    if name == "arith.cast":
        return _cast(xs[0], es[0], out)
    if name.startswith("arith."):
        return _binary(kind, xs[0], xs[1], es[0], es[1], out)
    if name.startswith("math.") or name == "nn.gelu":
        return _transcendental(kind, xs[0], es[0], out)
    if name.startswith("reduce."):
        return _reduce(kind, xs[0], es[0], out, op.attrs)
    if name == "linalg.dot_general":
        return _matmul(xs[0], xs[1], es[0], es[1], out, op.attrs)
    if name == "nn.softmax":
        return _softmax(xs[0], es[0], out, op.attrs)
    if name in ("tensor.sort", "tensor.argsort"):
        return _sort(kind, xs[0], es[0], out, op.attrs)
    raise AssertionError(f"oracle: no error rule for {name}")


def reference(module: Module, inputs: list[np.ndarray]) -> list[tuple[np.ndarray, np.ndarray]]:
    """(value, error bound) of each result of ``@f`` on ``inputs``."""
    fn = module.function("f")
    env = {p: (x, np.zeros(x.shape)) for p, x in zip(fn.params, inputs, strict=True)}
    for op in fn.body.ops:
        if op.name == "func.return":
            return [env[v] for v in op.operands]
        xs = [env[v][0] for v in op.operands]
        es = [env[v][1] for v in op.operands]
        with np.errstate(all="ignore"):
            (out,) = get_op_def(op.name).reference(xs, dict(op.attrs))
            out = np.asarray(out)
            e = _finish(out, _rule(op, xs, es, out))
        env[op.results[0]] = (out, e)
    raise AssertionError("function without func.return")


def mismatches(got: np.ndarray, want: np.ndarray, err: np.ndarray) -> str | None:
    """Why ``got`` is not a correct evaluation of ``want`` within ``err``, or None."""
    if not isinstance(got, np.ndarray) or got.dtype != want.dtype or got.shape != want.shape:
        return (f"expected {want.dtype}{list(want.shape)}, got "
                f"{getattr(got, 'dtype', type(got))}{list(np.shape(got))}")
    known = np.isfinite(err)
    if want.dtype.kind == "f":
        g, w = got.astype(np.float64), want.astype(np.float64)
        with np.errstate(all="ignore"):
            same = (np.isnan(g) & np.isnan(w)) | (g == w)
            near = np.abs(g - w) <= err
        ok = ~known | same | ((err > 0) & near)
    else:
        ok = ~known | (got == want)
    if ok.all():
        return None
    bad = np.argwhere(~ok)
    first = tuple(int(i) for i in bad[0])
    return (f"{len(bad)} of {want.size} elements differ; first at {list(first)}: got "
            f"{got[first]!r}, want {want[first]!r} (bound {err[first]:.3g})")
