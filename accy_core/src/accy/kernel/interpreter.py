"""Numpy reference semantics of kernel IR (the test oracle).

All ``groups * workgroup_size`` work-items run in lockstep as numpy lanes with an active
mask; statements execute one at a time for all active lanes, so a ``Barrier`` (always in
uniform control flow) needs no action. Shared arrays are ``(groups, size_elems)`` arrays.

Semantics pinned here and matched by the LLVM code generator:

- Integer arithmetic wraps; ``div``/``rem`` truncate toward zero; a zero divisor behaves as
  a divisor of 1 (``x / 0 == x``, ``x % 0 == 0``), ``MIN / -1 == MIN``.
- Shift amounts are taken modulo the bit width; ``shr`` is arithmetic for i32/i64.
- Float ``min``/``max`` return the non-NaN operand (IEEE minNum/maxNum, ``np.fmin``).
- Float → int casts saturate, NaN → 0 (:func:`accy.numerics.saturating_cast`); → bool is
  ``x != 0`` (NaN → true).
- ``mulhi`` is the high 32 bits of the 64-bit product of two i32 (signed) or u32 values.
- Out-of-bounds loads/stores raise ``IndexError`` (on a device they are undefined).
- With ``max_loop_iterations`` (a device that ends work-items after that many loop
  iterations, lavapipe), a launch whose loops run longer raises ``CapabilityError`` where the
  device would silently stop. Counted as lavapipe does (measured): every iteration of every
  loop of the kernel, each loop with its longest lane (all lanes run in lockstep, as a SIMD
  group does), plus one per loop execution for the test that leaves it; the device allows
  ``max_loop_iterations + 1`` counts (one loop of exactly the limit still completes).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from accy.errors import CapabilityError, InternalError, VerifyError
from accy.kernel import ir
from accy.kernel.ir import NUMPY_DTYPES
from accy.kernel.verifier import verify_kernel
from accy.numerics import COMPARE as _COMPARE
from accy.numerics import saturating_cast

__all__ = ["NUMPY_DTYPES", "as_groups", "interpret"]

_UNARY = {
    "exp": np.exp,
    "log": np.log,
    "sqrt": np.sqrt,
    "tanh": np.tanh,
    "sin": np.sin,
    "cos": np.cos,
    "floor": np.floor,
    "ceil": np.ceil,
    "exp2": np.exp2,
    "log2": np.log2,
}


@dataclass
class _State:
    kernel: ir.Kernel
    buffers: dict[str, np.ndarray]
    shared: dict[str, np.ndarray]
    n_lanes: int
    ids: dict[str, np.ndarray]
    env: dict[str, np.ndarray] = field(default_factory=dict)
    loop_budget: int | None = None
    loop_count: int = 0


def interpret(
    kernel: ir.Kernel, geometry: object, buffers: list[np.ndarray], scalars: list[object],
    max_loop_iterations: int | None = None,
) -> None:
    """Run ``kernel`` over ``geometry`` on host arrays, updating ``buffers`` in place.

    Args:
        kernel: the kernel (verified first).
        geometry: a ``Geometry`` (``.groups``; its ``workgroup_size`` must equal the kernel's)
            or an int number of work-groups.
        buffers: one 1-D numpy array per buffer parameter, in launch order, with the
            parameter's dtype (``bool`` for bool buffers).
        scalars: one Python/numpy scalar per scalar parameter, in launch order.
        max_loop_iterations: the device's loop-iteration limit per work-item (None: none).

    Raises:
        VerifyError: invalid kernel, or arguments that do not match its parameters.
        IndexError: a load or store out of bounds.
        CapabilityError: the loops ran past ``max_loop_iterations`` (see the module
            docstring; buffers are then partly updated).
    """
    verify_kernel(kernel)
    groups = as_groups(geometry, kernel.workgroup_size)
    if len(buffers) != len(kernel.buffers) or len(scalars) != len(kernel.scalars):
        raise VerifyError(
            f"interpret {kernel.name!r}: expected {len(kernel.buffers)} buffers "
            f"and {len(kernel.scalars)} scalars, got {len(buffers)} and "
            f"{len(scalars)}"
        )
    bufs = {}
    for p, a in zip(kernel.buffers, buffers, strict=True):
        if a.dtype != NUMPY_DTYPES[p.dtype]:
            raise VerifyError(
                f"interpret {kernel.name!r}: buffer {p.name!r} must be "
                f"{p.dtype}, got numpy {a.dtype}"
            )
        bufs[p.name] = a.reshape(-1)
    ws = kernel.workgroup_size
    n = groups * ws
    lanes = np.arange(n, dtype=np.int64)
    ids = {
        "global": lanes.astype(np.int32),
        "local": (lanes % ws).astype(np.int32),
        "group": (lanes // ws).astype(np.int32),
        "num_groups": np.full(n, groups, np.int32),
    }
    shared = {
        a.name: np.zeros((groups, a.size_elems), NUMPY_DTYPES[a.dtype]) for a in kernel.shared
    }
    st = _State(kernel, bufs, shared, n, ids, loop_budget=max_loop_iterations)
    for p, v in zip(kernel.scalars, scalars, strict=True):
        st.env[p.name] = np.full(n, v, NUMPY_DTYPES[p.dtype])
    with np.errstate(all="ignore"):
        _block(st, kernel.body, np.ones(n, bool))


def as_groups(geometry: object, workgroup_size: int) -> int:
    """Return the number of work-groups in ``geometry`` (a ``Geometry`` or an int).

    Raises:
        VerifyError: the geometry's work-group size differs from ``workgroup_size``.
    """
    if isinstance(geometry, int):
        return geometry
    ws = getattr(geometry, "workgroup_size", workgroup_size)
    if ws != workgroup_size:
        raise VerifyError(
            f"geometry workgroup_size {ws} differs from the kernel's "
            f"{workgroup_size}; kernels have a fixed work-group size"
        )
    return int(geometry.groups)  # type: ignore[attr-defined]


# ------------------------------------------------------------------------------ expressions


def _eval(st: _State, e: ir.Expr, mask: np.ndarray) -> np.ndarray:
    match e:
        case ir.Const(value, dtype):
            return np.full(st.n_lanes, value, NUMPY_DTYPES[dtype])
        case ir.Var(name, _):
            return st.env[name]
        case ir.ThreadId(kind, _):
            return st.ids[kind]
        case ir.Unary(op, x, dtype):
            return _unary(op, _eval(st, x, mask), dtype)
        case ir.Binary(op, a, b, _):
            return _binary(op, _eval(st, a, mask), _eval(st, b, mask))
        case ir.Select(c, a, b, _):
            return np.where(_eval(st, c, mask), _eval(st, a, mask), _eval(st, b, mask))
        case ir.Fma(a, b, x, _):  # unfused: one of the two results Fma allows
            prod = _binary("mul", _eval(st, a, mask), _eval(st, b, mask))
            return _binary("add", prod, _eval(st, x, mask))
        case ir.Cast(x, dtype):
            return _cast(_eval(st, x, mask), dtype)
        case ir.Bitcast(x, dtype):
            return _eval(st, x, mask).view(NUMPY_DTYPES[dtype])
        case ir.Load(buf, index, dtype):
            idx = _eval(st, index, mask)
            out = np.zeros(st.n_lanes, NUMPY_DTYPES[dtype])
            out[mask] = st.buffers[buf][_checked(idx[mask], len(st.buffers[buf]), buf)]
            return out
        case ir.SharedLoad(arr, index, dtype):
            idx = _eval(st, index, mask)
            a = st.shared[arr]
            out = np.zeros(st.n_lanes, NUMPY_DTYPES[dtype])
            out[mask] = a[st.ids["group"][mask], _checked(idx[mask], a.shape[1], arr)]
            return out
    raise InternalError(f"interpreter: unknown expression {type(e).__name__}; please report")


def _checked(idx: np.ndarray, size: int, name: str) -> np.ndarray:
    idx = idx.astype(np.int64)
    if idx.size and (idx.min() < 0 or idx.max() >= size):
        bad = idx[(idx < 0) | (idx >= size)][0]
        raise IndexError(
            f"kernel interpreter: index {bad} out of bounds for {name!r} of {size} elements"
        )
    return idx


def _unary(op: str, x: np.ndarray, dtype: str) -> np.ndarray:
    if op == "neg":
        return (-x).astype(x.dtype)
    if op == "abs":
        return np.abs(x).astype(x.dtype)
    if op == "not":
        return np.logical_not(x) if dtype == "bool" else np.invert(x)
    if op == "rsqrt":
        return (1 / np.sqrt(x)).astype(x.dtype)
    return _UNARY[op](x).astype(x.dtype)


def _binary(op: str, a: np.ndarray, b: np.ndarray) -> np.ndarray:  # noqa: C901 - one case per op
    if op in _COMPARE:
        return _COMPARE[op](a, b)
    is_int = a.dtype.kind in "iu"
    match op:
        case "add":
            return (a + b).astype(a.dtype)
        case "sub":
            return (a - b).astype(a.dtype)
        case "mul":
            return (a * b).astype(a.dtype)
        case "div" | "rem" if is_int:
            return _int_divrem(op, a, b)
        case "div":
            return (a / b).astype(a.dtype)
        case "rem":
            return np.fmod(a, b).astype(a.dtype)
        case "min":
            return np.fmin(a, b) if not is_int else np.minimum(a, b)
        case "max":
            return np.fmax(a, b) if not is_int else np.maximum(a, b)
        case "pow":
            return np.power(a, b).astype(a.dtype)
        case "and":
            return a & b
        case "or":
            return a | b
        case "xor":
            return a ^ b
        case "shl" | "shr":
            bits = a.dtype.itemsize * 8
            s = (b & (bits - 1)).astype(a.dtype)
            return (a << s if op == "shl" else a >> s).astype(a.dtype)
        case "mulhi":
            wide = np.uint64 if a.dtype == np.uint32 else np.int64
            return ((a.astype(wide) * b.astype(wide)) >> 32).astype(a.dtype)
    raise InternalError(f"interpreter: unknown binary op {op!r}; please report")


def _int_divrem(op: str, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    b = np.where(b == 0, np.ones_like(b), b)
    if a.dtype.kind == "i":
        minimum = np.iinfo(a.dtype).min
        b = np.where((a == minimum) & (b == -1), np.ones_like(b), b)
    q = a // b
    fix = (a % b != 0) & ((a < 0) != (b < 0))
    q = (q + fix.astype(a.dtype)).astype(a.dtype)
    return q if op == "div" else (a - q * b).astype(a.dtype)


def _cast(x: np.ndarray, dtype: str) -> np.ndarray:
    target = NUMPY_DTYPES[dtype]
    if dtype == "bool":
        return x != 0
    return saturating_cast(x, target)


# ------------------------------------------------------------------------------- statements


def _set(st: _State, name: str, value: np.ndarray, mask: np.ndarray) -> None:
    old = st.env.get(name)
    if old is None or old.dtype != value.dtype:
        old = np.zeros(st.n_lanes, value.dtype)
    st.env[name] = np.where(mask, value, old)


def _block(st: _State, stmts: tuple[ir.Stmt, ...], mask: np.ndarray) -> None:
    for s in stmts:
        if mask.any():
            _stmt(st, s, mask)


def _stmt(st: _State, s: ir.Stmt, mask: np.ndarray) -> None:
    match s:
        case ir.Let(name, value) | ir.Assign(name, value):
            _set(st, name, _eval(st, value, mask), mask)
        case ir.Store(buf, index, value):
            idx = _eval(st, index, mask)[mask]
            target = st.buffers[buf]
            target[_checked(idx, len(target), buf)] = _eval(st, value, mask)[mask]
        case ir.SharedStore(arr, index, value):
            idx = _eval(st, index, mask)[mask]
            a = st.shared[arr]
            a[st.ids["group"][mask], _checked(idx, a.shape[1], arr)] = _eval(st, value, mask)[mask]
        case ir.AtomicRMW(op, buf, index, value):
            idx = _checked(_eval(st, index, mask)[mask], len(st.buffers[buf]), buf)
            _atomic(op, st.buffers[buf], idx, _eval(st, value, mask)[mask])
        case ir.For(var, start, stop, step, body):
            _set(st, var, _eval(st, start, mask), mask)
            hi, inc = _eval(st, stop, mask), _eval(st, step, mask)
            active = mask & (st.env[var] < hi)
            if mask.any():
                _count_iteration(st)  # the test that leaves the loop
            while active.any():
                _count_iteration(st)
                _block(st, body, active)
                _set(st, var, (st.env[var] + inc).astype(hi.dtype), active)
                active = active & (st.env[var] < hi)
        case ir.If(cond, then, orelse):
            c = _eval(st, cond, mask)
            _block(st, then, mask & c)
            _block(st, orelse, mask & ~c)
        case ir.Barrier() | ir.Prefetch():
            pass  # a prefetch is a hint: no effect on results


def _count_iteration(st: _State) -> None:
    st.loop_count += 1
    if st.loop_budget is not None and st.loop_count > st.loop_budget + 1:
        raise CapabilityError(
            f"kernel {st.kernel.name!r}: its work-items run more than {st.loop_budget} loop "
            "iterations (all loops together), where a device with max_loop_iterations="
            f"{st.loop_budget} silently ends them; split the loop over launches",
            feature="max_loop_iterations")


def _atomic(op: str, target: np.ndarray, idx: np.ndarray, value: np.ndarray) -> None:
    if op == "add":
        np.add.at(target, idx, value)
    elif op == "min":
        (np.fmin if target.dtype.kind == "f" else np.minimum).at(target, idx, value)
    elif op == "max":
        (np.fmax if target.dtype.kind == "f" else np.maximum).at(target, idx, value)
    elif op == "or":
        np.bitwise_or.at(target, idx, value)
    elif op == "and":
        np.bitwise_and.at(target, idx, value)
    else:  # xchg: some lane's value wins
        target[idx] = value
