"""Which kernels keep their work-item loops scalar on CPU-mode targets.

:func:`gathering_loops` decides, from the kernel IR alone, whether
:mod:`accy.codegen.llvm` marks a kernel's local-id and work-group loops
``llvm.loop.vectorize.enable false``. The analysis is a small affine one: the stride of each
buffer index per work-item, through single-assignment ``let`` variables.
"""

from __future__ import annotations

from accy.kernel import ir
from accy.kernel.verifier import uniform_variables

__all__ = ["gathering_loops"]


class _Strides:
    """The stride, in elements per work-item, of index expressions (None: not affine in the
    work-item id, or not known): ``gid + r`` has 1, ``t * 32 + r`` 32, ``gid / 32`` None."""

    def __init__(self, kernel: ir.Kernel) -> None:
        self.varying = uniform_variables(kernel)[1]
        lets: dict[str, list[ir.Expr]] = {}
        self._collect(kernel.body, lets)
        self.single = {n: v[0] for n, v in lets.items() if len(v) == 1}

    def _collect(self, stmts: tuple[ir.Stmt, ...], lets: dict[str, list[ir.Expr]]) -> None:
        for s in stmts:
            if isinstance(s, ir.Let | ir.Assign):
                lets.setdefault(s.name, []).append(s.value)
            elif isinstance(s, ir.For):
                lets.setdefault(s.var, []).extend((s.start, s.start))  # never "single"
                self._collect(s.body, lets)
            elif isinstance(s, ir.If):
                self._collect(s.then, lets)
                self._collect(s.orelse, lets)

    def stride(self, e: ir.Expr, depth: int = 0) -> int | None:
        if depth > 32:
            return None
        match e:
            case ir.Const():
                return 0
            case ir.ThreadId(kind, _):
                return 1 if kind in ("global", "local") else 0
            case ir.Var(name, _):
                if name not in self.varying:
                    return 0
                value = self.single.get(name)
                return None if value is None else self.stride(value, depth + 1)
            case ir.Cast(x, _):
                return self.stride(x, depth + 1)
            case ir.Binary(op, a, b, _) if op in ("add", "sub", "mul"):
                return self._binary(op, a, b, depth)
        return None if self._varies(e) else 0

    def _binary(self, op: str, a: ir.Expr, b: ir.Expr, depth: int) -> int | None:
        sa, sb = self.stride(a, depth + 1), self.stride(b, depth + 1)
        if sa is None or sb is None:
            return None
        if op == "add":
            return sa + sb
        if op == "sub":
            return sa - sb
        if sa == 0 and sb == 0:
            return 0
        factor = a if sa == 0 else b if sb == 0 else None  # mul: one side must be uniform
        if isinstance(factor, ir.Const) and isinstance(factor.value, int):
            return (sb if sa == 0 else sa) * factor.value
        return None

    def _varies(self, e: ir.Expr) -> bool:
        match e:
            case ir.ThreadId(kind, _):
                return kind in ("global", "local")
            case ir.Var(name, _):
                return name in self.varying
            case ir.Load() | ir.SharedLoad():
                return True
            case ir.Binary(_, a, b, _):
                return self._varies(a) or self._varies(b)
            case ir.Unary(_, x, _) | ir.Cast(x, _) | ir.Bitcast(x, _):
                return self._varies(x)
            case ir.Select(c, a, b, _) | ir.Fma(a, b, c, _):
                return any(self._varies(x) for x in (c, a, b))
        return False


def _indices(e: ir.Expr, out: list[ir.Expr]) -> None:
    match e:
        case ir.Load(_, index, _):
            out.append(index)
            _indices(index, out)
        case ir.Binary(_, a, b, _):
            _indices(a, out)
            _indices(b, out)
        case ir.Unary(_, x, _) | ir.Cast(x, _) | ir.Bitcast(x, _):
            _indices(x, out)
        case ir.Select(c, a, b, _) | ir.Fma(a, b, c, _):
            for x in (c, a, b):
                _indices(x, out)


def _loop_indices(stmts: tuple[ir.Stmt, ...], in_loop: bool, out: list[ir.Expr]) -> None:
    """The buffer indices used inside ``For`` loops (loads and stores)."""
    for s in stmts:
        if isinstance(s, ir.For):
            _loop_indices(s.body, True, out)
        elif isinstance(s, ir.If):
            _loop_indices(s.then, in_loop, out)
            _loop_indices(s.orelse, in_loop, out)
        elif in_loop and isinstance(s, ir.Let | ir.Assign):
            _indices(s.value, out)
        elif in_loop and isinstance(s, ir.Store):
            out.append(s.index)
            _indices(s.index, out)
            _indices(s.value, out)


def gathering_loops(kernel: ir.Kernel) -> bool:
    """Whether ``kernel``'s work-item loops are emitted with loop vectorization disabled.

    True when a ``For`` loop of the work-item body reads or writes a buffer at an index
    that is not contiguous across work-items (stride other than 0 or ±1 per work-item:
    ``x[t * 32 + r]``, ``x[r + (gid / 32) * 32]``, ``x[idx[gid]]``), as the generic
    reduction lowering does over a small inner extent. O3 unrolls such a loop fully, and the
    loop vectorizer then vectorizes the local-id (or, at work-group size 1, the work-group)
    loop with one gather per load and iteration. Measured on the CPU target (znver3, 1M
    outputs, ``x[r + (gid / 32) * 32] * y[gid % 32 + r * 32]``): inner extents 4 / 16 / 32
    ran 2.72 / 30.5 / 47.8 ms vectorized and 1.38 / 15.3 / 40.7 ms scalar (SLP still
    applies), and compiled in 45 / 142 / 200 ms instead of 31 / 22 / 30 ms.
    """
    indices: list[ir.Expr] = []
    _loop_indices(kernel.body, False, indices)
    if not indices:
        return False
    strides = _Strides(kernel)
    return any(strides.stride(i) not in (0, 1, -1) for i in indices)
