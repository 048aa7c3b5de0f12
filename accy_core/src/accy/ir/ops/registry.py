"""The op registry: each op declares its operands, attributes, type inference and reference.

An :class:`OpDef` is data: the verifier, the builder, the parser, constant folding and the
test oracle all read it. ``reference`` gives the numpy semantics of the op (the definition
every backend is tested against).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from accy.errors import VerifyError, known_names
from accy.ir.types import TensorType

__all__ = ["OpDef", "register_op", "get_op_def", "op_names", "ATTR_KINDS"]

#: Attribute kinds understood by the printer and parser.
ATTR_KINDS = ("int", "float", "bool", "str", "ints", "type", "dense", "dtype")

InferFn = Callable[[Sequence[TensorType], dict[str, Any]], list[TensorType]]
ReferenceFn = Callable[[Sequence[np.ndarray], dict[str, Any]], list[np.ndarray]]


@dataclass(frozen=True)
class OpDef:
    """Declaration of one tensor IR op.

    Attributes:
        name: ``namespace.op_name``.
        num_operands: exact operand count, or ``None`` for variadic.
        attrs: required attribute name → kind (one of :data:`ATTR_KINDS`).
        optional_attrs: optional attribute name → (kind, default).
        infer: result types from operand types and attributes; raises VerifyError.
        reference: numpy semantics (operand arrays, attrs) → result arrays, or ``None``.
        traits: ``pure``, ``elementwise``, ``commutative``, ``reduction``, ``terminator``,
            ``region``, ``constant``.
        summary: one line for docs and ``accy ops``.
    """

    name: str
    num_operands: int | None
    infer: InferFn
    reference: ReferenceFn | None = None
    attrs: dict[str, str] = field(default_factory=dict)
    optional_attrs: dict[str, tuple[str, Any]] = field(default_factory=dict)
    traits: frozenset[str] = frozenset({"pure"})
    summary: str = ""

    def has(self, trait: str) -> bool:
        return trait in self.traits

    def attr_kind(self, name: str) -> str | None:
        if name in self.attrs:
            return self.attrs[name]
        if name in self.optional_attrs:
            return self.optional_attrs[name][0]
        return None

    def full_attrs(self, attrs: dict[str, Any]) -> dict[str, Any]:
        """Attributes with optional ones filled in by their defaults."""
        out = {k: d for k, (_, d) in self.optional_attrs.items()}
        out.update(attrs)
        return out

    def infer_types(self, operand_types: Sequence[TensorType], attrs: dict[str, Any]) -> list[TensorType]:
        """Check operand count and attributes, then return the inferred result types.

        Raises:
            VerifyError: wrong operand count, missing/unknown attribute, or a shape/dtype
                rule of the op is broken (the message names the op).
        """
        if self.num_operands is not None and len(operand_types) != self.num_operands:
            raise VerifyError(
                f"'{self.name}' op: expected {self.num_operands} operands, got {len(operand_types)}",
                op=self.name,
            )
        for a in self.attrs:
            if a not in attrs:
                raise VerifyError(f"'{self.name}' op: missing attribute '{a}'", op=self.name)
        for a in attrs:
            if self.attr_kind(a) is None:
                raise VerifyError(
                    f"'{self.name}' op: unknown attribute '{a}'; "
                    + known_names([*self.attrs, *self.optional_attrs]),
                    op=self.name,
                )
        return self.infer(list(operand_types), self.full_attrs(attrs))


_REGISTRY: dict[str, OpDef] = {}


def register_op(op_def: OpDef) -> OpDef:
    """Add ``op_def`` to the registry (a plugin may add ops; a duplicate name is an error)."""
    if op_def.name in _REGISTRY and _REGISTRY[op_def.name] is not op_def:
        raise VerifyError(f"op '{op_def.name}' is registered twice")
    _REGISTRY[op_def.name] = op_def
    return op_def


def get_op_def(name: str) -> OpDef:
    """Return the declaration of op ``name``.

    Raises:
        VerifyError: unknown op (lists the known ones).
    """
    _ensure_loaded()
    try:
        return _REGISTRY[name]
    except KeyError:
        raise VerifyError(f"unknown op '{name}'; {known_names(_REGISTRY)}", op=name) from None


def op_names() -> list[str]:
    _ensure_loaded()
    return sorted(_REGISTRY)


_loaded = False


def _ensure_loaded() -> None:
    global _loaded
    if not _loaded:
        _loaded = True
        from accy.ir.ops import arith, dispatch, func, linalg, math, nn, reduce, tensor  # noqa: F401,E501
