"""Tensor IR structure: values, operations, blocks, regions, functions, modules.

A :class:`Module` holds :class:`Function` s; a function's body is a :class:`Block` whose
arguments are the function parameters and whose last op is ``func.return``. Values are in
SSA form and each op records its uses, so passes can rewrite in place
(:meth:`Value.replace_all_uses_with`, :meth:`Operation.erase`). Ops with regions (the
``dispatch.*`` ops of later stages) hold single-block :class:`Region` s.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

from accy.errors import InternalError
from accy.ir.types import TensorType

__all__ = ["Block", "Function", "Module", "Operation", "Region", "Value"]


class Value:
    """An SSA tensor value: an op result or a block argument.

    Attributes:
        type: the value's :class:`TensorType`.
        owner: the defining :class:`Operation`, or the :class:`Block` for an argument.
        index: result index in the owner op, or argument index in the block.
        uses: ``(op, operand_index)`` pairs that read this value.
    """

    __slots__ = ("index", "name_hint", "owner", "type", "uses")

    def __init__(self, type: TensorType, owner: Operation | Block, index: int) -> None:
        self.type = type
        self.owner = owner
        self.index = index
        self.uses: list[tuple[Operation, int]] = []
        self.name_hint: str | None = None

    @property
    def is_block_arg(self) -> bool:
        return isinstance(self.owner, Block)

    @property
    def defining_op(self) -> Operation | None:
        return self.owner if isinstance(self.owner, Operation) else None

    @property
    def users(self) -> list[Operation]:
        seen: list[Operation] = []
        for op, _ in self.uses:
            if op not in seen:
                seen.append(op)
        return seen

    def replace_all_uses_with(self, other: Value) -> None:
        """Make every user of this value read ``other`` instead."""
        for op, i in list(self.uses):
            op.set_operand(i, other)

    def __repr__(self) -> str:
        src = self.owner.name if isinstance(self.owner, Operation) else "arg"
        return f"<Value {src}#{self.index}: {self.type}>"


class Operation:
    """One op: a registered name, operands, typed results, attributes and optional regions.

    Attributes:
        name: ``namespace.op_name`` (``arith.add``); must be in the op registry to verify.
        operands: values read, in order.
        results: values defined, in order.
        attrs: attribute name → value (int, float, bool, str, tuple of ints, TensorType,
            numpy array for ``tensor.constant``).
        regions: nested single-block regions (dispatch ops).
        location: the user's ``file:line`` that created the op, when known.
    """

    __slots__ = ("attrs", "location", "name", "operands", "parent", "regions", "results")

    def __init__(
        self,
        name: str,
        operands: Sequence[Value],
        result_types: Sequence[TensorType],
        attrs: Mapping[str, Any] | None = None,
        regions: Sequence[Region] = (),
        location: str | None = None,
    ) -> None:
        self.name = name
        self.operands: list[Value] = []
        for v in operands:
            self._add_operand(v)
        self.results = [Value(t, self, i) for i, t in enumerate(result_types)]
        self.attrs: dict[str, Any] = dict(attrs or {})
        self.regions: list[Region] = list(regions)
        for r in self.regions:
            r.parent_op = self
        self.parent: Block | None = None
        self.location = location

    def _add_operand(self, v: Value) -> None:
        if not isinstance(v, Value):
            raise InternalError(f"operand of {self.name} is not a Value: {v!r}; please report")
        v.uses.append((self, len(self.operands)))
        self.operands.append(v)

    @property
    def result(self) -> Value:
        """The single result (ops with exactly one result)."""
        if len(self.results) != 1:
            raise InternalError(f"{self.name} has {len(self.results)} results; please report")
        return self.results[0]

    @property
    def op_def(self):
        from accy.ir.ops.registry import get_op_def

        return get_op_def(self.name)

    def set_operand(self, i: int, v: Value) -> None:
        old = self.operands[i]
        old.uses.remove((self, i))
        v.uses.append((self, i))
        self.operands[i] = v

    def drop_uses(self) -> None:
        """Detach this op (and nested ops) from the use lists of its operands."""
        for i, v in enumerate(self.operands):
            if (self, i) in v.uses:
                v.uses.remove((self, i))
        for r in self.regions:
            for op in r.block.ops:
                op.drop_uses()

    def erase(self) -> None:
        """Remove this op from its block; its results must have no uses left."""
        for r in self.results:
            if r.uses:
                raise InternalError(
                    f"erasing {self.name} whose result is still used; please report"
                )
        self.drop_uses()
        parent = self.parent
        if parent is not None:
            if parent._batch is not None:
                parent._batch[0].add(self)
            else:
                parent.ops.remove(self)
            self.parent = None

    def walk(self) -> Iterator[Operation]:
        """Yield this op, then every op nested in its regions (pre-order)."""
        yield self
        for r in self.regions:
            for op in r.block.ops:
                yield from op.walk()

    def __repr__(self) -> str:
        return f"<Operation {self.name}>"


class Block:
    """A straight-line list of ops with typed arguments.

    :meth:`Operation.erase` and :meth:`insert_before` find their op's position by a linear
    search of :attr:`ops`; a pass that erases or inserts many ops of one block does so
    inside :meth:`batch_edits`, which applies them in one sweep (linear, not quadratic, in
    the block's length: a 70,000-op unrolled program spent most of its compile there).
    """

    __slots__ = ("_batch", "args", "ops", "parent_region")

    def __init__(self, arg_types: Sequence[TensorType] = ()) -> None:
        self.args = [Value(t, self, i) for i, t in enumerate(arg_types)]
        self.ops: list[Operation] = []
        self.parent_region: Region | None = None
        #: inside :meth:`batch_edits`: (erased ops, anchor -> ops inserted before it)
        self._batch: tuple[set[Operation], dict[Operation, list[Operation]]] | None = None

    @contextmanager
    def batch_edits(self) -> Iterator[Block]:
        """Defer the list edits of :meth:`Operation.erase` and :meth:`insert_before` on
        this block to the end of the ``with`` (one O(len(ops)) sweep for all of them).

        Inside it an erased op is detached at once (uses dropped, ``parent`` ``None``) and
        an inserted op has ``parent`` set and its operands' uses recorded, but
        :attr:`ops` still lists erased ops and does not list inserted ones yet: the
        caller must iterate a snapshot and judge liveness by ``op.parent``. Re-entrant
        (an inner ``with`` joins the outer one).
        """
        if self._batch is not None:
            yield self
            return
        self._batch = (set(), {})
        try:
            yield self
        finally:
            dead, before = self._batch
            self._batch = None
            if dead or before:
                self.ops[:] = [o for o in _with_inserted(self.ops, before) if o not in dead]

    def add_arg(self, type: TensorType) -> Value:
        v = Value(type, self, len(self.args))
        self.args.append(v)
        return v

    def append(self, op: Operation) -> Operation:
        op.parent = self
        self.ops.append(op)
        return op

    def insert_before(self, anchor: Operation, op: Operation) -> Operation:
        op.parent = self
        if self._batch is not None:
            self._batch[1].setdefault(anchor, []).append(op)
        else:
            self.ops.insert(self.ops.index(anchor), op)
        return op

    @property
    def terminator(self) -> Operation | None:
        return self.ops[-1] if self.ops else None


def _with_inserted(ops: list[Operation],
                   before: dict[Operation, list[Operation]]) -> Iterator[Operation]:
    """``ops`` with the ops recorded in ``before`` placed ahead of their anchors (an anchor
    may itself be an inserted op); iterative, so long insertion chains do not recurse."""
    for op in ops:
        if op not in before:
            yield op
            continue
        # expand "inserted before" chains depth-first, in insertion order
        stack: list[tuple[Operation, int]] = [(op, 0)]
        while stack:
            anchor, i = stack.pop()
            pending = before.get(anchor, ())
            if i < len(pending):
                stack.append((anchor, i + 1))
                stack.append((pending[i], 0))
            else:
                yield anchor


class Region:
    """A single-block region owned by an op."""

    __slots__ = ("block", "parent_op")

    def __init__(self, block: Block | None = None) -> None:
        self.block = block if block is not None else Block()
        self.block.parent_region = self
        self.parent_op: Operation | None = None


class Function:
    """A named function: parameters are the body's block arguments, ``func.return`` ends it."""

    __slots__ = ("attrs", "body", "name", "result_types")

    def __init__(
        self,
        name: str,
        param_types: Sequence[TensorType],
        result_types: Sequence[TensorType],
        attrs: Mapping[str, Any] | None = None,
    ) -> None:
        self.name = name
        self.body = Block(param_types)
        self.result_types = list(result_types)
        self.attrs: dict[str, Any] = dict(attrs or {})

    @property
    def params(self) -> list[Value]:
        return self.body.args

    @property
    def param_types(self) -> list[TensorType]:
        return [a.type for a in self.body.args]

    @property
    def returns(self) -> list[Value]:
        term = self.body.terminator
        if term is None or term.name != "func.return":
            return []
        return list(term.operands)

    def walk(self) -> Iterator[Operation]:
        for op in self.body.ops:
            yield from op.walk()


class Module:
    """A tensor IR module: an ordered list of functions plus module attributes.

    ``attrs`` carries products of later stages (for example the kernel IR of the kernel
    stage under ``"kernels"``); they take part in printing only where a stage registers a
    printer for them.
    """

    def __init__(self, functions: Sequence[Function] = ()) -> None:
        self.functions: list[Function] = list(functions)
        self.attrs: dict[str, Any] = {}

    def function(self, name: str) -> Function:
        for f in self.functions:
            if f.name == name:
                return f
        from accy.errors import IRError, known_names

        raise IRError(
            f"no function @{name} in module; {known_names((f.name for f in self.functions), name)}"
        )

    def walk(self) -> Iterator[Operation]:
        for f in self.functions:
            yield from f.walk()

    def op_count(self) -> int:
        """Number of ops in the module, nested ops included, terminators excluded."""
        return sum(1 for op in self.walk() if op.name not in ("func.return", "dispatch.yield"))

    def to_text(self) -> str:
        """Print the module in accy's textual IR (parses back with :func:`accy.parse_module`)."""
        from accy.ir.printer import print_module

        return print_module(self)

    def fingerprint(self) -> str:
        """Structural sha256 hex digest: stable across processes and value names."""
        from accy.ir.fingerprint import fingerprint

        return fingerprint(self)

    def verify(self) -> None:
        """Raise :class:`accy.errors.VerifyError` if the module is malformed."""
        from accy.ir.verifier import verify

        verify(self)

    def clone(self) -> Module:
        """Deep copy (ops, values, attrs); kernel products in ``attrs`` are shared."""
        from accy.ir.clone import clone_module

        return clone_module(self)

    def __str__(self) -> str:
        return self.to_text()
