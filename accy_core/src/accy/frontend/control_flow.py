"""Structured control flow with JAX's signatures: ``fori_loop``, ``while_loop``, ``scan``,
``cond``.

Inside a jitted function each loop body is traced once, into a function of its own (the
body of a ``loop.for`` / ``loop.while`` op), whatever the trip count: a 1,000-step stencil
is one loop node in the launch graph, and its steps run on the device without a host
round trip (a ``while_loop`` reads its condition back once per iteration). Carries are
pytrees (tuples, lists, dicts) of arrays and scalars; each carried value must keep its
dtype and shape from one iteration to the next. Arrays of the enclosing function used in a
body are passed to the loop as invariants. Outside a trace the functions run eagerly with
numpy, like plain Python loops.

``cond`` evaluates both branches and selects (``anp.where``): both are traced, so they
must be free of side effects, as in JAX.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from accy.errors import UnsupportedError, VerifyError
from accy.frontend.numpy_api import value_of, wrap
from accy.frontend.trace import Trace, current_trace, tracing, user_location
from accy.frontend.tracer import Tracer
from accy.frontend.tree import flatten, unflatten
from accy.ir import DType, FunctionBuilder, TensorType, Value


def _shape(x: Any) -> tuple[int, ...]:
    return tuple(x.shape) if isinstance(x, Tracer) else np.shape(x)


def _ndim(x: Any) -> int:
    return len(_shape(x))


__all__ = ["cond", "fori_loop", "scan", "while_loop"]

_IV = TensorType(DType.I32, ())


class _Collect:
    """Owner of a body's FunctionBuilder: a finished body joins the root trace's functions."""

    def __init__(self, root: Trace) -> None:
        self.root = root

    def _close(self, fb: FunctionBuilder) -> None:
        self.root.functions.append(fb.function)


def _body_trace(parent: Trace, kind: str, params: Sequence[TensorType]) -> Trace:
    root = parent.root
    count = root.__dict__.get("_bodies", 0)
    root.__dict__["_bodies"] = count + 1
    name = f"{root.name}_{kind}{count}"
    fb = FunctionBuilder(_Collect(root), name, list(params), None)  # type: ignore[arg-type]
    fb.function.attrs["private"] = True  # only its loop calls it: prepared in place
    return Trace(fb, name, parent)


def _static_int(x: Any, what: str, fix: str) -> int:
    if isinstance(x, Tracer):
        raise UnsupportedError(f"{what} at {user_location()} is a traced value; the trip "
                               f"count must be static: {fix}", feature="dynamic trip count",
                               alternative=fix)
    if isinstance(x, (bool, np.bool_)) or not isinstance(x, (int, np.integer)):
        raise VerifyError(f"{what} at {user_location()} must be an integer, got {x!r}")
    return int(x)


def _carried(tr: Trace, x: Any, t: TensorType, k: int, what: str) -> Value:
    """Body result ``x`` as a value of carried type ``t`` (a weak scalar adopts it)."""
    if isinstance(x, Tracer):
        v = x.value
    else:
        v = value_of(tr, x, t.dtype if _ndim(x) == 0 else None)
        if v.type.shape != t.shape and v.type.rank == 0:
            v = tr.fb.broadcast_to(v, t.shape)
    if v.type != t:
        raise VerifyError(
            f"{what} at {user_location()}: carried value #{k} comes back as {v.type}, it "
            f"started as {t}; a carry keeps its dtype and shape (cast with .astype or start "
            "from a value of the final type)")
    return v


def _trace_body(body: Trace, fn: Callable[..., Any],
                args: Callable[[list[Tracer]], tuple]) -> Any:
    """Run ``fn(*args(tracers))`` in trace ``body``; return its (unchecked) result."""
    fb = body.fb
    with tracing(body):
        tracers = [Tracer(fb.param(k), body) for k in range(len(fb.function.params))]
        return fn(*args(tracers))


def _finish(body: Trace, out: Any, tree: Any, types: list[TensorType], what: str) -> None:
    leaves: list[Any] = []
    with tracing(body):
        out_tree = flatten(_numbers_as_arrays(out), leaves, f"{what} result")
        if out_tree != tree:
            raise VerifyError(f"{what} at {user_location()}: the body returns a carry of "
                              f"another structure than the initial value ({out_tree} vs {tree})")
        body.fb.return_(*[_carried(body, x, t, k, what)
                          for k, (x, t) in enumerate(zip(leaves, types, strict=True))])
    body.fb.finish()


class _Weak(np.ndarray):
    """Marks a carry leaf that was a number (see :func:`_inits`)."""


def _numbers_as_arrays(x: Any, weak_marks: bool = False) -> Any:
    """Python numbers in a carry are carried values too (int32, float32 or bool); with
    ``weak_marks`` they become :class:`_Weak` arrays, to tell them from the arrays."""
    if isinstance(x, (tuple, list)):
        return type(x)(_numbers_as_arrays(v, weak_marks) for v in x)
    if isinstance(x, dict):
        return {k: _numbers_as_arrays(v, weak_marks) for k, v in x.items()}
    if isinstance(x, (bool, int, float, np.bool_, np.integer, np.floating)):
        from accy.frontend.trace import default_dtype

        arr = np.asarray(x, dtype=default_dtype(x).numpy if not isinstance(x, np.generic)
                         else None)
        return arr.view(_Weak) if weak_marks else arr
    return x


def _inits(tr: Trace, init: Any, what: str) -> tuple[Any, list[Value], list[bool]]:
    """The carry's structure, its initial values and which of them are weak (a Python or
    numpy number, whose dtype the body's result may promote, as JAX's weak types)."""
    leaves: list[Any] = []
    tree = flatten(_numbers_as_arrays(init), leaves, f"{what} init_val")
    marks: list[Any] = []
    flatten(_numbers_as_arrays(init, weak_marks=True), marks, f"{what} init_val")
    weak = [isinstance(m, _Weak) for m in marks]
    if len(weak) != len(leaves):  # cannot happen: the same walk; stay strict if it does
        weak = [False] * len(leaves)
    return tree, [value_of(tr, x) for x in leaves], weak


def _promoted(tr: Trace, out: Any, inits: list[Value], weak: list[bool]) -> list[Value] | None:
    """``inits`` with each weak scalar cast to the dtype the body returned for it (``0.0``
    that the body adds an f64 array to becomes f64), or None when no weak carry changes."""
    leaves: list[Any] = []
    try:
        flatten(_numbers_as_arrays(out), leaves, "loop body result")
    except Exception:  # noqa: BLE001 - a malformed result is reported by _finish
        return None
    if len(leaves) != len(inits):
        return None
    new, changed = list(inits), False
    for k, (x, v) in enumerate(zip(leaves, inits, strict=True)):
        if weak[k] and isinstance(x, Tracer) and tuple(x.shape) == v.type.shape and \
                x.value.type.dtype != v.type.dtype:
            new[k] = tr.fb.cast(v, x.value.type.dtype)
            changed = True
    return new if changed else None


def fori_loop(lower: int, upper: int, body_fun: Callable[[Any, Any], Any], init_val: Any) -> Any:
    """``jax.lax.fori_loop``: ``val = body_fun(i, val)`` for ``i`` in ``range(lower, upper)``.

    ``lower`` and ``upper`` are Python ints (static trip count); inside a trace ``i`` is a
    traced ``int32`` scalar: index with it (``x[i]``, ``x.at[i].set(v)``). Returns the final
    carry (the structure of ``init_val``).

    Raises:
        UnsupportedError: a traced bound (use ``while_loop``).
        VerifyError: the body changes a carried value's dtype, shape or the structure.
    """
    fix = "use accy.while_loop for a trip count computed on the device"
    lo = _static_int(lower, "fori_loop lower", fix)
    hi = _static_int(upper, "fori_loop upper", fix)
    tr = current_trace()
    if tr is None:
        val = init_val
        for i in range(lo, hi):
            val = body_fun(i, val)
        return val
    tree, inits, weak = _inits(tr, init_val, "fori_loop")
    if hi <= lo:
        return unflatten(tree, [wrap(tr, v) for v in inits])
    n = len(inits)
    while True:  # at most twice: once more after a weak carry is promoted
        types = [v.type for v in inits]
        body = _body_trace(tr, "for", [_IV, *types])
        out = _trace_body(body, body_fun, lambda ts: (ts[0], unflatten(tree, ts[1:n + 1])))
        promoted = _promoted(tr, out, inits, weak)
        if promoted is None:
            break
        inits, weak = promoted, [False] * len(weak)  # the unfinished body is dropped
    _finish(body, out, tree, types, "fori_loop")
    res = tr.fb.emit("loop.for", [*inits, *body.captured],
                     {"body": body.fb.function.name, "carried": len(types), "lower": lo,
                      "upper": hi})
    return unflatten(tree, [wrap(tr, r) for r in res])


def _align(traces: Sequence[Trace], fixed: int) -> list[Value]:
    """Give every function the same captured parameters (the union, in order)."""
    union: list[Value] = []
    for t in traces:
        union += [v for v in t.captured if v not in union]
    for t in traces:
        block = t.fb.function.body
        args = block.args[:fixed]
        for v in union:
            p = t._params.get(v)
            args.append(p if p is not None else Value(v.type, block, 0))
        for k, a in enumerate(args):
            a.index = k
        block.args = args
    return union


def while_loop(cond_fun: Callable[[Any], Any], body_fun: Callable[[Any], Any],
               init_val: Any) -> Any:
    """``jax.lax.while_loop``: ``while cond_fun(val): val = body_fun(val)``.

    ``cond_fun`` returns a scalar boolean (traced: evaluated on the device and read back
    before each iteration). Returns the final carry.

    Raises:
        VerifyError: the condition is not a scalar bool, or the body changes a carry.
    """
    tr = current_trace()
    if tr is None:
        val = init_val
        while bool(cond_fun(val)):
            val = body_fun(val)
        return val
    tree, inits, weak = _inits(tr, init_val, "while_loop")
    n = len(inits)
    while True:  # trace the body first: a weak carry it promotes retypes the condition too
        types = [v.type for v in inits]
        body = _body_trace(tr, "while", types)
        out = _trace_body(body, body_fun, lambda ts: (unflatten(tree, ts[:n]),))
        promoted = _promoted(tr, out, inits, weak)
        if promoted is None:
            break
        inits, weak = promoted, [False] * n
    ctr = _body_trace(tr, "cond", types)
    c = _trace_body(ctr, cond_fun, lambda ts: (unflatten(tree, ts[:n]),))
    with tracing(ctr):
        cv = c.value if isinstance(c, Tracer) else value_of(ctr, c, DType.BOOL)
        if cv.type != TensorType(DType.BOOL, ()):
            raise VerifyError(f"while_loop cond_fun at {user_location()} returned {cv.type}; "
                              "it must return a scalar bool (reduce with .any() or compare)")
        ctr.fb.return_(cv)
    ctr.fb.finish()
    _finish(body, out, tree, types, "while_loop")
    inv = _align([ctr, body], n)
    res = tr.fb.emit("loop.while", [*inits, *inv],
                     {"cond": ctr.fb.function.name, "body": body.fb.function.name,
                      "carried": n})
    return unflatten(tree, [wrap(tr, r) for r in res])


def _tree_map(f: Callable[..., Any], tree: Any, *rest: Any) -> Any:
    leaves: list[Any] = []
    t = flatten(tree, leaves)
    others = []
    for r in rest:
        rl: list[Any] = []
        flatten(r, rl)
        others.append(rl)
    return unflatten(t, [f(x, *(o[k] for o in others)) for k, x in enumerate(leaves)])


def _leading(xs: Any, length: int | None) -> int:
    leaves: list[Any] = []
    flatten(xs, leaves)
    ns = {_shape(x)[0] for x in leaves if _ndim(x)}
    if length is not None:
        ns.add(int(length))
    if len(ns) != 1:
        raise VerifyError(f"scan at {user_location()}: xs leaves and length disagree on the "
                          f"number of steps ({sorted(ns)}); give arrays of one leading extent")
    return ns.pop()


def scan(f: Callable[[Any, Any], tuple[Any, Any]], init: Any, xs: Any = None,
         length: int | None = None, reverse: bool = False) -> tuple[Any, Any]:
    """``jax.lax.scan``: ``carry, y = f(carry, x)`` over the leading axis of ``xs``; returns
    the final carry and the ``y`` s stacked along a new leading axis.

    Raises:
        VerifyError: ``xs`` leaves of different lengths, or ``f`` changes the carry.
    """
    from accy.frontend.dynamic_index import dynamic_getitem
    from accy.frontend.shape_api import zeros

    n = _leading(xs, length)
    tr = current_trace()
    if tr is None:
        carry, ys = init, []
        for k in range(n):
            i = n - 1 - k if reverse else k
            carry, y = f(carry, _tree_map(lambda a, i=i: np.asarray(a)[i], xs))
            ys.append(y)
        if reverse:
            ys.reverse()
        return carry, (_tree_map(lambda *a: np.stack(a), ys[0], *ys[1:]) if ys else None)

    def step(i: Any, c: Any) -> Any:
        return f(c, _tree_map(lambda a: dynamic_getitem(a, (i,)) if isinstance(a, Tracer)
                              else dynamic_getitem(wrap(current_trace(), value_of(
                                  current_trace(), a)), (i,)), xs))

    probe = _body_trace(tr, "probe", [_IV])  # learn the y types; the probe is dropped
    with tracing(probe):
        _, y0 = step(Tracer(probe.fb.param(0), probe), init)
        y_leaves: list[Any] = []
        y_tree = flatten(y0, y_leaves, "scan f result")
        specs = [(_shape(y), y.dtype if isinstance(y, Tracer) else np.asarray(y).dtype)
                 for y in y_leaves]
    ys0 = unflatten(y_tree, [zeros((n, *shape), dtype=dt) for shape, dt in specs])

    def body(k: Any, state: Any) -> Any:
        c, ys = state
        i = (n - 1) - k if reverse else k
        c2, y = step(i, c)
        return c2, _tree_map(lambda big, small: big.at[i].set(small), ys, y)

    return fori_loop(0, n, body, (init, ys0))


def cond(pred: Any, true_fun: Callable[..., Any], false_fun: Callable[..., Any],
         *operands: Any) -> Any:
    """``jax.lax.cond``: ``true_fun(*operands)`` if ``pred`` else ``false_fun(*operands)``.

    A traced ``pred`` evaluates both branches and selects elementwise (the branch results
    must have the same structure, dtypes and shapes); a Python bool calls one branch.

    Raises:
        VerifyError: the branches return different structures, dtypes or shapes.
    """
    from accy.frontend.numpy_api import where

    if not isinstance(pred, Tracer):
        return true_fun(*operands) if bool(np.asarray(pred)) else false_fun(*operands)
    if pred.ndim:
        raise VerifyError(f"cond at {user_location()}: pred must be a scalar, got shape "
                          f"{list(pred.shape)}")
    a, b = true_fun(*operands), false_fun(*operands)
    la: list[Any] = []
    lb: list[Any] = []
    ta, tb = flatten(a, la, "cond true_fun result"), flatten(b, lb, "cond false_fun result")
    if ta != tb:
        raise VerifyError(f"cond at {user_location()}: the branches return different "
                          f"structures ({ta} vs {tb})")
    out = []
    for k, (x, y) in enumerate(zip(la, lb, strict=True)):
        if _shape(x) != _shape(y):
            raise VerifyError(f"cond at {user_location()}: branch results #{k} have shapes "
                              f"{list(_shape(x))} and {list(_shape(y))}")
        out.append(where(pred, x, y))
    return unflatten(ta, out)
