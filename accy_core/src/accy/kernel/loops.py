"""Static loop-trip bounds of kernel IR, for devices that limit loop iterations.

Some devices end a work-item silently after ``max_loop_iterations`` loop iterations of a
kernel, all loops together (:attr:`accy.backend.Capabilities.max_loop_iterations`; lavapipe:
65535). :func:`loop_trips` bounds what one work-item of a kernel runs: sequential loops add,
nested loops multiply, both branches of an ``if`` count (the larger), and each execution of
a loop counts one more for the test that leaves it (as lavapipe counts). A loop bound it can
read statically is a constant, or a start that is a ``ThreadId`` or a variable bound to one
(never negative, so the trip count is at most ``ceil(stop / step)``); anything else
(scalars, loads) makes the bound unknown.
"""

from __future__ import annotations

from accy.kernel import ir

__all__ = ["loop_trips"]


def _const(e: ir.Expr) -> int | None:
    return int(e.value) if isinstance(e, ir.Const) and not isinstance(e.value, float) else None


def _trips(loop: ir.For, ids: set[str]) -> int | None:
    stop, step = _const(loop.stop), _const(loop.step)
    nonneg = isinstance(loop.start, ir.ThreadId) or (
        isinstance(loop.start, ir.Var) and loop.start.name in ids)
    start = 0 if nonneg else _const(loop.start)
    if start is None or stop is None or step is None or step <= 0:
        return None
    return max(0, -(-(stop - start) // step))


def _block(stmts: tuple[ir.Stmt, ...], ids: set[str]) -> int | None:
    total = 0
    for s in stmts:
        if isinstance(s, ir.Let) and isinstance(s.value, ir.ThreadId):
            ids.add(s.name)
        elif isinstance(s, (ir.Let, ir.Assign)):
            ids.discard(s.name)
        elif isinstance(s, ir.For):
            own, inner = _trips(s, ids), _block(s.body, set(ids))
            if own is None or inner is None:
                return None
            total += 1 + own * (1 + inner)
        elif isinstance(s, ir.If):
            then, orelse = _block(s.then, set(ids)), _block(s.orelse, set(ids))
            if then is None or orelse is None:
                return None
            total += max(then, orelse)
    return total


def loop_trips(kernel: ir.Kernel) -> int | None:
    """Return the most loop iterations one work-item of ``kernel`` runs (every loop, nested
    ones per iteration of the enclosing loop), or None when a bound is not static."""
    return _block(kernel.body, set())
