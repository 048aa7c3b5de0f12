"""The op registry: each op declares its operands, attributes, type inference and reference.

An :class:`OpDef` is data: the verifier, the builder, the parser, constant folding and the
test oracle all read it. ``reference`` gives the numpy semantics of the op (the definition
every backend is tested against).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from accy.errors import VerifyError, known_names
from accy.ir.types import TensorType

__all__ = ["ATTR_KINDS", "OpDef", "get_op_def", "op_names", "register_op"]

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

    def __post_init__(self) -> None:
        # (operand types, attrs) -> inferred result types: an unrolled Python loop emits,
        # verifies and re-verifies the same few signatures thousands of times
        object.__setattr__(self, "_inferred", {})
        # Callers pass an op's attrs as written; fill in optional defaults for the reference.
        if self.reference is not None and self.optional_attrs:
            ref = self.reference

            def reference_with_defaults(xs, attrs, _ref=ref):
                return _ref(xs, self.full_attrs(dict(attrs)))

            object.__setattr__(self, "reference", reference_with_defaults)

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

    def infer_types(
        self, operand_types: Sequence[TensorType], attrs: dict[str, Any]
    ) -> list[TensorType]:
        """Check operand count and attributes, then return the inferred result types.

        Raises:
            VerifyError: wrong operand count, missing/unknown attribute, or a shape/dtype
                rule of the op is broken (the message names the op).

        A successful result is remembered per exact signature (operand types, and attribute
        values compared with their Python types, floats bit for bit); a signature with an
        unhashable attribute (an array, a list) is inferred each time, errors always are.
        """
        try:
            key: tuple | None = (tuple(operand_types), _freeze_attrs(attrs))
            hit = self._inferred.get(key)  # type: ignore[attr-defined]
        except _Unhashable:
            key = hit = None
        if hit is not None:
            return list(hit)
        types = self._infer_checked(operand_types, attrs)
        if key is not None:
            cache = self._inferred  # type: ignore[attr-defined]
            if len(cache) >= _INFER_CACHE_SIZE:
                cache.clear()
            cache[key] = tuple(types)
        return types

    def _infer_checked(
        self, operand_types: Sequence[TensorType], attrs: dict[str, Any]
    ) -> list[TensorType]:
        if self.num_operands is not None and len(operand_types) != self.num_operands:
            raise VerifyError(
                f"'{self.name}' op: expected {self.num_operands} operands, "
                f"got {len(operand_types)}",
                op=self.name,
            )
        for a, value in attrs.items():  # unknown first: a misspelt name is also a missing one
            if self.attr_kind(a) is None:
                raise VerifyError(
                    f"'{self.name}' op: unknown attribute '{a}'; "
                    + known_names([*self.attrs, *self.optional_attrs], a),
                    op=self.name,
                )
            _check_attr_kind(self.name, a, self.attr_kind(a) or "", value)
        for a in self.attrs:
            if a not in attrs:
                raise VerifyError(f"'{self.name}' op: missing attribute '{a}'", op=self.name)
        try:
            return self.infer(list(operand_types), self.full_attrs(attrs))
        except VerifyError as e:
            if e.message.startswith(f"'{self.name}' op"):
                raise
            raise VerifyError(f"'{self.name}' op: {e.message}", op=self.name) from None


#: signatures remembered per op (cleared when full)
_INFER_CACHE_SIZE = 4096


class _Unhashable(Exception):
    """An attribute value :func:`_freeze_attrs` does not key on."""


def _freeze(v: Any) -> Any:
    t = type(v)
    if t is float:
        return (t, v.hex())  # 0.0 and -0.0, 1 and 1.0 and True stay distinct
    if t is int or t is bool or t is str or t is TensorType:
        return (t, v)
    if t is tuple:
        return (t, tuple(_freeze(x) for x in v))
    raise _Unhashable


def _freeze_attrs(attrs: dict[str, Any]) -> tuple:
    """A hashable key equal only for attribute dicts of equal values and Python types."""
    return tuple((k, _freeze(v)) for k, v in attrs.items())


def _is_int(v: Any) -> bool:
    return isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_))


def _kind_ok(kind: str, v: Any) -> bool:
    from accy.ir.dtypes import DType

    if kind == "int":
        return _is_int(v)
    if kind == "float":
        return _is_int(v) or isinstance(v, (float, np.floating))
    if kind == "bool":
        return isinstance(v, (bool, np.bool_))
    if kind == "str":
        return isinstance(v, str)
    if kind == "ints":
        return isinstance(v, (tuple, list)) and all(_is_int(x) for x in v)
    if kind == "type":
        return isinstance(v, TensorType)
    if kind == "dense":
        return isinstance(v, np.ndarray)
    if kind == "dtype":  # printed by name, so a DType or its text ("f32"), nothing else
        return isinstance(v, str) and v in {d.value for d in DType}
    return True


def _check_attr_kind(op: str, name: str, kind: str, v: Any) -> None:
    """Raise VerifyError if attribute ``name`` of ``op`` is not of its declared kind."""
    if not _kind_ok(kind, v):
        raise VerifyError(f"'{op}' op: attribute '{name}' must be of kind {kind}, got {v!r}", op=op)


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
        raise VerifyError(f"unknown op '{name}'; {known_names(_REGISTRY, name)}", op=name) from None


def op_names() -> list[str]:
    _ensure_loaded()
    return sorted(_REGISTRY)


_loaded = False
_LOAD_LOCK = threading.RLock()


def _ensure_loaded() -> None:
    """Import every op module once. The flag is set only after the imports finished, under a
    lock: a thread that set it first and then imported let a second thread look ops up in a
    half-filled registry (``unknown op 'math.sin'`` when threads traced at once)."""
    global _loaded
    if _loaded:
        return
    with _LOAD_LOCK:
        if _loaded:
            return
        from accy.ir.ops import (  # noqa: F401
            arith,
            dispatch,
            dynamic,
            func,
            library,  # noqa: F401
            linalg,
            loop,
            math,
            nn,
            reduce,
            tensor,
        )
        _loaded = True
