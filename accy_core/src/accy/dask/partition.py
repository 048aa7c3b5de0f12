"""Which axes of a traced program may stay chunked: an axis-label analysis of the tensor IR.

Every dimension of every value gets a *label*; labels that must index the same positions
are unified (union-find). A label class is **chunked** when some argument dimension in it
has more than one Dask chunk. The rules, op by op:

- elementwise ops (and ``tensor.broadcast_to`` where an extent is kept) unify dimension by
  dimension; an extent that ``broadcast_to`` creates gets a fresh *flexible* label (no data
  of its own, so it can take any block size);
- ``tensor.transpose`` permutes labels; ``tensor.reshape``, ``tensor.slice`` and
  ``tensor.pad`` keep the labels of the dimensions they leave untouched;
- ``linalg.dot_general`` / ``linalg.einsum`` pair batch dimensions and need every
  contracted dimension in one chunk; ``nn.softmax`` and sorts need their axis in one chunk;
- a reduction over a chunked class is a **cross-block reduction**: Dask runs it as a tree
  (per-block partial reductions plus combines), see :mod:`accy.dask.graph`;
- arrays built inside the program (constants, ``iota``, random draws, results of ops not
  listed above) carry *rigid* labels: full-extent data that cannot be split, so meeting a
  chunked class is an error.

A program that breaks a rule raises :class:`~accy.errors.UnsupportedError` naming the op,
the user's line and the rechunking that would work.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from accy.errors import UnsupportedError
from accy.ir import Function, Operation, Value

__all__ = ["Labels", "analyze"]

PARAM, FLEX, RIGID = "param", "flex", "rigid"
CROSS_BLOCK = frozenset({"reduce.sum", "reduce.max", "reduce.min", "reduce.mean"})
_AXIS_OPS = frozenset({"nn.softmax", "tensor.sort", "tensor.argsort", "library.sort",
                       "library.argsort"})


@dataclass
class _Label:
    size: int
    kind: str  # PARAM, FLEX or RIGID
    origin: str  # what made it, for messages
    chunks: tuple[int, ...] = ()


@dataclass
class Labels:
    """The analysis result for one function.

    Attributes:
        dims: value -> one label id per dimension (use :meth:`cls` for the class).
        cross_block: reduction ops whose reduced axes include a chunked class.
    """

    labels: list[_Label] = field(default_factory=list)
    parent: list[int] = field(default_factory=list)
    dims: dict[Value, list[int]] = field(default_factory=dict)
    cross_block: set[Operation] = field(default_factory=set)
    _local: list[tuple[int, str]] = field(default_factory=list)

    def new(self, size: int, kind: str, origin: str, chunks: tuple[int, ...] = ()) -> int:
        self.labels.append(_Label(size, kind, origin, chunks))
        self.parent.append(len(self.parent))
        return len(self.parent) - 1

    def cls(self, label: int) -> int:
        """The representative label of ``label``'s class."""
        while self.parent[label] != label:
            self.parent[label] = self.parent[self.parent[label]]
            label = self.parent[label]
        return label

    def unify(self, a: int, b: int) -> None:
        ra, rb = self.cls(a), self.cls(b)
        if ra != rb:
            self.parent[max(ra, rb)] = min(ra, rb)

    def members(self, label: int) -> list[_Label]:
        root = self.cls(label)
        return [lab for i, lab in enumerate(self.labels) if self.cls(i) == root]

    def chunked(self, label: int) -> bool:
        """True when an argument dimension of the class has more than one chunk."""
        return any(m.kind == PARAM and len(m.chunks) > 1 for m in self.members(label))

    def chunks(self, label: int) -> tuple[int, ...]:
        """The chunk sizes of the class (one chunk of the full extent when unchunked)."""
        for m in self.members(label):
            if m.kind == PARAM and len(m.chunks) > 1:
                return m.chunks
        return (self.labels[label].size,)

    def chunked_classes(self, v: Value) -> list[int]:
        return [self.cls(lab) for lab in self.dims[v] if self.chunked(lab)]

    def need_local(self, label: int, why: str) -> None:
        self._local.append((label, why))


def _where(op: Operation) -> str:
    return f"{op.name}" + (f" at {op.location}" if op.location else "")


def _fresh(lab: Labels, v: Value, kind: str, origin: str) -> list[int]:
    return [lab.new(n, kind, origin) for n in v.type.shape]


def _elementwise(lab: Labels, op: Operation) -> list[int]:
    out = list(lab.dims[op.operands[0]])
    for v in op.operands[1:]:
        for a, b in zip(out, lab.dims[v], strict=False):
            lab.unify(a, b)
    return out


def _broadcast(lab: Labels, op: Operation) -> list[int]:
    src, res = op.operands[0], op.results[0]
    shift = res.type.rank - src.type.rank
    out = []
    for j, n in enumerate(res.type.shape):
        i = j - shift
        if i >= 0 and src.type.shape[i] == n:
            out.append(lab.dims[src][i])
        else:
            out.append(lab.new(n, FLEX, _where(op)))
    return out


def _reshape(lab: Labels, op: Operation) -> list[int]:
    src, res = op.operands[0], op.results[0]
    a, b = src.type.shape, res.type.shape
    pre = 0
    while pre < min(len(a), len(b)) and a[pre] == b[pre]:
        pre += 1
    suf = 0
    while suf < min(len(a), len(b)) - pre and a[-1 - suf] == b[-1 - suf]:
        suf += 1
    ins = lab.dims[src]
    for i in range(pre, len(a) - suf):
        lab.need_local(ins[i], f"{_where(op)} regroups axis {i}")
    mid = [lab.new(n, RIGID, _where(op)) for n in b[pre:len(b) - suf]]
    return ins[:pre] + mid + (ins[len(a) - suf:] if suf else [])


def _per_axis_keep(lab: Labels, op: Operation, keep: Sequence[bool]) -> list[int]:
    src, res = op.operands[0], op.results[0]
    out = []
    for i, k in enumerate(keep):
        if k:
            out.append(lab.dims[src][i])
        else:
            lab.need_local(lab.dims[src][i], f"{_where(op)} cuts axis {i}")
            out.append(lab.new(res.type.shape[i], RIGID, _where(op)))
    return out


def _reduce(lab: Labels, op: Operation) -> list[int]:
    src = op.operands[0]
    axes = {a % max(src.type.rank, 1) for a in op.attrs["axes"]}
    keep = bool(op.attrs.get("keepdims", False))
    out = []
    for i, label in enumerate(lab.dims[src]):
        if i not in axes:
            out.append(label)
        elif keep:
            out.append(lab.new(1, FLEX, _where(op)))
    return out


def _dot(lab: Labels, op: Operation) -> list[int]:
    lhs, rhs = (lab.dims[v] for v in op.operands)
    lb, rb = op.attrs.get("lhs_batch", []), op.attrs.get("rhs_batch", [])
    lc, rc = op.attrs["lhs_contracting"], op.attrs["rhs_contracting"]
    for i, j in zip(lb, rb, strict=True):
        lab.unify(lhs[i], rhs[j])
    for i, j in zip(lc, rc, strict=True):
        lab.unify(lhs[i], rhs[j])
        lab.need_local(lhs[i], f"{_where(op)} contracts axis {i} of its left operand")
    free_l = [lhs[i] for i in range(len(lhs)) if i not in lb and i not in lc]
    free_r = [rhs[j] for j in range(len(rhs)) if j not in rb and j not in rc]
    return [lhs[i] for i in lb] + free_l + free_r


def _einsum(lab: Labels, op: Operation) -> list[int] | None:
    spec = str(op.attrs["spec"]).replace(" ", "")
    if "..." in spec or "->" not in spec:
        return None
    ins, out = spec.split("->")
    letters: dict[str, int] = {}
    for v, sub in zip(op.operands, ins.split(","), strict=True):
        for ch, label in zip(sub, lab.dims[v], strict=True):
            if ch in letters:
                lab.unify(letters[ch], label)
            else:
                letters[ch] = label
    for ch, label in letters.items():
        if ch not in out:
            lab.need_local(label, f"{_where(op)} contracts index {ch!r}")
    return [letters[ch] for ch in out]


def _axis_op(lab: Labels, op: Operation) -> list[int]:
    src = op.operands[0]
    axis = int(op.attrs.get("axis", -1)) % max(src.type.rank, 1)
    lab.need_local(lab.dims[src][axis], f"{_where(op)} works along axis {axis}")
    return list(lab.dims[src])


def _generic(lab: Labels, op: Operation) -> None:
    for v in op.operands:
        for i, label in enumerate(lab.dims[v]):
            lab.need_local(label, f"{_where(op)} reads axis {i} of an operand as a whole")
    for r in op.results:
        lab.dims[r] = _fresh(lab, r, RIGID, _where(op))


def _op_labels(lab: Labels, op: Operation) -> list[int] | None:  # noqa: C901 - one dispatch
    name = op.name
    if op.regions:
        return None
    if op.op_def.has("elementwise"):
        return _elementwise(lab, op)
    if name == "tensor.broadcast_to":
        return _broadcast(lab, op)
    if name == "tensor.transpose":
        return [lab.dims[op.operands[0]][p] for p in op.attrs["perm"]]
    if name == "tensor.reshape":
        return _reshape(lab, op)
    if name == "tensor.slice":
        shape = op.operands[0].type.shape
        keep = [lo == 0 and hi == n for lo, hi, n in
                zip(op.attrs["start"], op.attrs["limit"], shape, strict=True)]
        return _per_axis_keep(lab, op, keep)
    if name == "tensor.pad":
        keep = [lo == 0 and hi == 0 for lo, hi in zip(op.attrs["low"], op.attrs["high"],
                                                       strict=True)]
        return _per_axis_keep(lab, op, keep)
    if op.op_def.has("reduction"):
        return _reduce(lab, op)
    if name == "linalg.dot_general":
        return _dot(lab, op)
    if name == "linalg.einsum":
        return _einsum(lab, op)
    if name in _AXIS_OPS:
        return _axis_op(lab, op)
    return None


def _check(lab: Labels, fn: Function) -> None:
    for label, why in lab._local:
        if lab.chunked(label):
            raise UnsupportedError(
                f"accy.dask: {fn.name}: {why}, which is chunked; rechunk that axis of the "
                f"input to one chunk ({_axis_names(lab, label)})",
                feature="dask partitioning", alternative="rechunk the axis to one chunk")
    for i, m in enumerate(lab.labels):
        if m.kind == RIGID and lab.chunked(i):
            raise UnsupportedError(
                f"accy.dask: {fn.name}: {m.origin} builds an array of full extent {m.size} "
                f"along an axis that is chunked ({_axis_names(lab, i)}); pass that array as "
                f"an argument, or rechunk the axis to one chunk",
                feature="dask partitioning", alternative="rechunk the axis to one chunk")


def _axis_names(lab: Labels, label: int) -> str:
    names = [m.origin for m in lab.members(label) if m.kind == PARAM and len(m.chunks) > 1]
    return ", ".join(names) or "a chunked axis"


def analyze(fn: Function, chunks: Sequence[tuple[tuple[int, ...], ...]]) -> Labels:
    """Label every dimension of ``fn``'s values; find its cross-block reductions.

    Args:
        fn: a tensor-stage function (as traced by :func:`accy.jit`).
        chunks: for each parameter, its Dask chunks (one tuple of block extents per axis).

    Raises:
        UnsupportedError: an op needs a chunked axis whole, or an array built inside the
            program meets a chunked axis; the message names the op, the line and the axis.
    """
    lab = Labels()
    for i, (p, ch) in enumerate(zip(fn.params, chunks, strict=True)):
        lab.dims[p] = [lab.new(n, PARAM, f"axis {d} of argument #{i}", tuple(c))
                       for d, (n, c) in enumerate(zip(p.type.shape, ch, strict=True))]
    for op in fn.body.ops:
        if op.name == "func.return":
            continue
        out = _op_labels(lab, op)
        if out is None:
            _generic(lab, op)
        else:
            lab.dims[op.results[0]] = out
    _check(lab, fn)
    for op in fn.body.ops:
        if op.name in CROSS_BLOCK:
            src = op.operands[0]
            axes = {a % max(src.type.rank, 1) for a in op.attrs["axes"]}
            if any(lab.chunked(lab.dims[src][a]) for a in axes):
                lab.cross_block.add(op)
        elif op.op_def.has("reduction"):
            src = op.operands[0]
            for a in op.attrs["axes"]:
                label = lab.dims[src][a % max(src.type.rank, 1)]
                if lab.chunked(label):
                    raise UnsupportedError(
                        f"accy.dask: {fn.name}: {_where(op)} reduces a chunked axis and has "
                        f"no tree combine; rechunk that axis to one chunk "
                        f"({_axis_names(lab, label)})", feature="dask partitioning")
    return lab
