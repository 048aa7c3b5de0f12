"""A small builder for writing kernel IR by hand (kernel families are written in it).

Example: a guarded ``y[i] = a * x[i] + y[i]``::

    kb = KernelBuilder("saxpy", workgroup_size=256)
    y = kb.buffer("y", "f32", "readwrite")
    x = kb.buffer("x", "f32", "read")
    n = kb.scalar("n", "i32")
    a = kb.scalar("a", "f32")
    i = kb.global_id()
    with kb.if_(i < n):
        kb.store(y, i, a * x[i] + y[i])
    kernel = kb.build()

Expressions are wrapped in :class:`E`, which overloads ``+ - * / % & | ^ << >> ~ -`` and
comparisons; Python numbers are converted to constants of the other operand's dtype.
``==`` and ``!=`` build compare expressions too (so ``E`` is not hashable).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from accy.errors import VerifyError
from accy.kernel import ir

__all__ = ["BufferRef", "E", "KernelBuilder", "SharedRef", "call", "fma", "where"]


def _unwrap(x: object, like: str | None = None) -> ir.Expr:
    if isinstance(x, E):
        return x.expr
    if isinstance(x, bool):
        return ir.const(x, "bool")
    if isinstance(x, int | float):
        dtype = like or ("f32" if isinstance(x, float) else "i32")
        return ir.const(x, dtype)
    if hasattr(x, "dtype") and not isinstance(x, BufferRef | SharedRef):
        return x  # type: ignore[return-value]
    raise VerifyError(f"kernel DSL: cannot use {x!r} as an expression")


class E:
    """An expression wrapper with Python operator overloads; ``.expr`` is the kernel-IR node."""

    __slots__ = ("expr",)
    __hash__ = None  # type: ignore[assignment]

    def __init__(self, expr: ir.Expr) -> None:
        self.expr = expr

    @property
    def dtype(self) -> str:
        """The dtype of the wrapped expression."""
        return self.expr.dtype

    def _bin(self, op: str, other: object, swap: bool = False) -> E:
        o = _unwrap(other, self.dtype)
        a, b = (o, self.expr) if swap else (self.expr, o)
        return E(ir.binary(op, a, b))

    def __add__(self, o: object) -> E:
        return self._bin("add", o)

    def __radd__(self, o: object) -> E:
        return self._bin("add", o, True)

    def __sub__(self, o: object) -> E:
        return self._bin("sub", o)

    def __rsub__(self, o: object) -> E:
        return self._bin("sub", o, True)

    def __mul__(self, o: object) -> E:
        return self._bin("mul", o)

    def __rmul__(self, o: object) -> E:
        return self._bin("mul", o, True)

    def __truediv__(self, o: object) -> E:
        return self._bin("div", o)

    def __rtruediv__(self, o: object) -> E:
        return self._bin("div", o, True)

    def __floordiv__(self, o: object) -> E:
        return self._bin("div", o)

    def __mod__(self, o: object) -> E:
        return self._bin("rem", o)

    def __and__(self, o: object) -> E:
        return self._bin("and", o)

    def __or__(self, o: object) -> E:
        return self._bin("or", o)

    def __xor__(self, o: object) -> E:
        return self._bin("xor", o)

    def __lshift__(self, o: object) -> E:
        return self._bin("shl", o)

    def __rshift__(self, o: object) -> E:
        return self._bin("shr", o)

    def __lt__(self, o: object) -> E:
        return self._bin("lt", o)

    def __le__(self, o: object) -> E:
        return self._bin("le", o)

    def __gt__(self, o: object) -> E:
        return self._bin("gt", o)

    def __ge__(self, o: object) -> E:
        return self._bin("ge", o)

    def __eq__(self, o: object) -> E:  # type: ignore[override]
        return self._bin("eq", o)

    def __ne__(self, o: object) -> E:  # type: ignore[override]
        return self._bin("ne", o)

    def __neg__(self) -> E:
        return E(ir.unary("neg", self.expr))

    def __invert__(self) -> E:
        return E(ir.unary("not", self.expr))

    def cast(self, dtype: str) -> E:
        """Return this expression converted to ``dtype`` (see :class:`accy.kernel.Cast`)."""
        return E(ir.cast(self.expr, dtype))

    def bitcast(self, dtype: str) -> E:
        """Return this expression's bits reinterpreted as ``dtype`` (same width)."""
        return E(ir.Bitcast(self.expr, dtype))

    def __repr__(self) -> str:
        from accy.kernel.printer import expr_to_text

        return f"E({expr_to_text(self.expr)})"


def call(op: str, *args: object) -> E:
    """Return the unary or binary op ``op`` applied to ``args`` (``call("exp", x)``)."""
    if len(args) == 1:
        return E(ir.unary(op, _unwrap(args[0])))
    a = _unwrap(args[0], _dtype_of(args[1]))
    return E(ir.binary(op, a, _unwrap(args[1], a.dtype)))


def _dtype_of(x: object) -> str | None:
    return x.dtype if isinstance(x, E) or hasattr(x, "dtype") else None  # type: ignore[union-attr]


def fma(a: object, b: object, x: object) -> E:
    """Return ``a * b + x`` (an :class:`accy.kernel.Fma`: fused where the target has FMA).

    Raises:
        VerifyError: operand dtypes differ or are bool.
    """
    like = _dtype_of(a) or _dtype_of(b) or _dtype_of(x)
    ea, eb, ex = (_unwrap(v, like) for v in (a, b, x))
    if ea.dtype == "bool" or not ea.dtype == eb.dtype == ex.dtype:
        raise VerifyError(
            f"fma: operands must share a non-bool dtype, got {ea.dtype}, {eb.dtype}, {ex.dtype}"
        )
    return E(ir.Fma(ea, eb, ex, ea.dtype))


def where(cond: object, a: object, b: object) -> E:
    """Return ``a if cond else b`` elementwise (a ``Select``)."""
    ea = _unwrap(a, _dtype_of(b))
    return E(ir.select(_unwrap(cond), ea, _unwrap(b, ea.dtype)))


class BufferRef:
    """A buffer parameter handle; ``buf[i]`` is a load expression."""

    def __init__(self, param: ir.BufferParam) -> None:
        self.param = param
        self.name = param.name

    def __getitem__(self, index: object) -> E:
        return E(ir.Load(self.name, _unwrap(index), self.param.dtype))


class SharedRef:
    """A shared array handle; ``arr[i]`` is a shared load expression."""

    def __init__(self, array: ir.SharedArray) -> None:
        self.array = array
        self.name = array.name

    def __getitem__(self, index: object) -> E:
        return E(ir.SharedLoad(self.name, _unwrap(index), self.array.dtype))


class KernelBuilder:
    """Build a :class:`accy.kernel.Kernel` statement by statement.

    Args:
        name: kernel (and entry symbol) name.
        workgroup_size: work-items per work-group.
    """

    def __init__(self, name: str, workgroup_size: int) -> None:
        self.name = name
        self.workgroup_size = workgroup_size
        self._buffers: list[ir.BufferParam] = []
        self._scalars: list[ir.ScalarParam] = []
        self._shared: list[ir.SharedArray] = []
        self._stack: list[list[ir.Stmt]] = [[]]
        self._counter = 0

    # parameters -------------------------------------------------------------------------
    def buffer(self, name: str, dtype: str, access: str = "read") -> BufferRef:
        """Declare the next buffer parameter (launch order) and return its handle."""
        p = ir.BufferParam(name, dtype, access)
        self._buffers.append(p)
        return BufferRef(p)

    def scalar(self, name: str, dtype: str) -> E:
        """Declare the next scalar parameter and return it as an expression."""
        self._scalars.append(ir.ScalarParam(name, dtype))
        return E(ir.Var(name, dtype))

    def shared(self, name: str, dtype: str, size_elems: int) -> SharedRef:
        """Declare a work-group shared array of ``size_elems`` elements."""
        a = ir.SharedArray(name, dtype, size_elems)
        self._shared.append(a)
        return SharedRef(a)

    # ids and constants ------------------------------------------------------------------
    def global_id(self) -> E:
        """The global work-item id (i32)."""
        return E(ir.ThreadId("global"))

    def local_id(self) -> E:
        """The work-item id inside its work-group (i32)."""
        return E(ir.ThreadId("local"))

    def group_id(self) -> E:
        """The work-group id (i32)."""
        return E(ir.ThreadId("group"))

    def num_groups(self) -> E:
        """The number of work-groups in the launch (i32)."""
        return E(ir.ThreadId("num_groups"))

    def const(self, value: float | bool, dtype: str) -> E:
        """A constant of ``dtype``."""
        return E(ir.const(value, dtype))

    # statements -------------------------------------------------------------------------
    def _emit(self, s: ir.Stmt) -> None:
        self._stack[-1].append(s)

    def fresh(self, prefix: str = "t") -> str:
        """Return a variable name not used before by this builder."""
        self._counter += 1
        return f"{prefix}{self._counter}"

    def let(self, name: str, value: object, dtype: str | None = None) -> E:
        """Declare variable ``name = value`` and return it as an expression."""
        v = _unwrap(value, dtype)
        if dtype is not None:
            v = ir.cast(v, dtype)
        self._emit(ir.Let(name, v))
        return E(ir.Var(name, v.dtype))

    def assign(self, var: E | str, value: object) -> None:
        """Assign ``value`` to a declared variable (an ``E`` of a ``Var`` or its name)."""
        target = var.expr if isinstance(var, E) else None
        name = target.name if isinstance(target, ir.Var) else str(var)
        like = target.dtype if isinstance(target, ir.Var) else None
        self._emit(ir.Assign(name, _unwrap(value, like)))

    def store(self, buffer: BufferRef | str, index: object, value: object) -> None:
        """``buffer[index] = value``."""
        ref = buffer if isinstance(buffer, BufferRef) else self._buffer(buffer)
        self._emit(ir.Store(ref.name, _unwrap(index), _unwrap(value, ref.param.dtype)))

    def shared_store(self, array: SharedRef, index: object, value: object) -> None:
        """``array[index] = value`` on a shared array."""
        self._emit(ir.SharedStore(array.name, _unwrap(index), _unwrap(value, array.array.dtype)))

    def atomic(self, op: str, buffer: BufferRef, index: object, value: object) -> None:
        """Atomic ``buffer[index] = op(buffer[index], value)`` (old value discarded)."""
        self._emit(
            ir.AtomicRMW(op, buffer.name, _unwrap(index), _unwrap(value, buffer.param.dtype))
        )

    def atomic_add(self, buffer: BufferRef, index: object, value: object) -> None:
        """Atomic ``buffer[index] += value``."""
        self.atomic("add", buffer, index, value)

    def barrier(self) -> None:
        """Work-group barrier (uniform control flow only)."""
        self._emit(ir.Barrier())

    def prefetch(self, buffer: BufferRef, index: object) -> None:
        """Hint that ``buffer[index]`` will be read soon (:class:`accy.kernel.ir.Prefetch`):
        no effect on results, any index (in range or not). The index and the control flow
        around it must be uniform over the work-group (as for :meth:`barrier`): the group
        issues it once. CPU: ``llvm.prefetch`` between work-item loops, so put it next to a
        barrier (it ends a barrier region); GPU targets drop it."""
        self._emit(ir.Prefetch(buffer.name, _unwrap(index)))

    @contextmanager
    def for_(self, var: str, start: object, stop: object, step: object = 1) -> Iterator[E]:
        """``for var in range(start, stop, step)``; yields the loop variable."""
        a = _unwrap(start, _dtype_of(stop))
        b, c = _unwrap(stop, a.dtype), _unwrap(step, a.dtype)
        self._stack.append([])
        yield E(ir.Var(var, a.dtype))
        body = tuple(self._stack.pop())
        self._emit(ir.For(var, a, b, c, body))

    @contextmanager
    def if_(self, cond: object) -> Iterator[None]:
        """``if cond:`` block; follow with :meth:`else_` for an else branch."""
        self._stack.append([])
        yield
        self._emit(ir.If(_unwrap(cond), tuple(self._stack.pop())))

    @contextmanager
    def else_(self) -> Iterator[None]:
        """The else branch of the ``if_`` block just closed."""
        block = self._stack[-1]
        if not block or not isinstance(block[-1], ir.If) or block[-1].orelse:
            raise VerifyError("kernel DSL: else_() must directly follow an if_() block")
        self._stack.append([])
        yield
        orelse = tuple(self._stack.pop())
        last = block.pop()
        assert isinstance(last, ir.If)
        block.append(ir.If(last.cond, last.then, orelse))

    def _buffer(self, name: str) -> BufferRef:
        for p in self._buffers:
            if p.name == name:
                return BufferRef(p)
        raise VerifyError(
            f"kernel DSL: unknown buffer {name!r}; known: "
            f"{', '.join(p.name for p in self._buffers)}"
        )

    def build(self, verify: bool = True) -> ir.Kernel:
        """Return the kernel; verify it first unless ``verify`` is false.

        Raises:
            VerifyError: the kernel is invalid (see :func:`accy.kernel.verify_kernel`).
        """
        if len(self._stack) != 1:
            raise VerifyError("kernel DSL: build() called inside an open for_/if_ block")
        k = ir.Kernel(
            self.name,
            tuple(self._buffers),
            tuple(self._scalars),
            tuple(self._stack[0]),
            self.workgroup_size,
            tuple(self._shared),
        )
        if verify:
            from accy.kernel.verifier import verify_kernel

            verify_kernel(k)
        return k
