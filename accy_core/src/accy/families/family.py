"""Family descriptors: what a kernel-library family is, independent of any backend.

A :class:`Family` (``sort``, ``spmv``, ``gather``) is a named operation with a
:class:`Signature` (its roles: inputs, outputs and options, with their dtypes and shapes), a
numpy/scipy reference, and one or more :class:`Variant` objects (``spmv.csr_scalar``,
``sort.radix``) each written once in the kernel DSL. A variant declares its candidate space
(work-group size, items per thread, variant-specific options) as a list of
:class:`Candidate` objects and picks a default for a problem with ``default(problem)``.

Descriptors are plain frozen dataclasses: building one imports nothing heavy, so plugins can
return them from ``accy_kernel_families()`` at discovery time. Variants name their
implementation lazily as ``"module:function"`` strings.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import field
from typing import Any

from accy.errors import InputError, known_names
from accy.records import record

__all__ = ["Candidate", "Family", "Role", "Signature", "Variant", "resolve"]

ROLE_KINDS = ("input", "output", "option")


@record
class Role:
    """One parameter of a family.

    Attributes:
        name: parameter name in the Python API (``indices``).
        kind: ``"input"`` (host array in), ``"output"`` (host array out) or ``"option"``.
        dtypes: accepted dtypes (kernel dtype names, ``("f32", "f64")``); empty for options.
        shape: shape in symbols, for documentation (``"(n_rows + 1,)"``).
        doc: one line of meaning and units.
    """

    name: str
    kind: str
    dtypes: tuple[str, ...] = ()
    shape: str = ""
    doc: str = ""

    def __post_init__(self) -> None:
        if self.kind not in ROLE_KINDS:
            raise InputError(f"role {self.name!r}: kind must be one of {ROLE_KINDS}, "
                             f"got {self.kind!r}")


@record
class Signature:
    """The roles of a family in API order."""

    roles: tuple[Role, ...]

    def role(self, name: str) -> Role:
        """Return the role called ``name``.

        Raises:
            InputError: no such role (the message lists the known ones).
        """
        for r in self.roles:
            if r.name == name:
                return r
        known = known_names((r.name for r in self.roles), name)
        raise InputError(f"unknown role {name!r}; {known}")

    @property
    def inputs(self) -> tuple[Role, ...]:
        return tuple(r for r in self.roles if r.kind == "input")

    @property
    def outputs(self) -> tuple[Role, ...]:
        return tuple(r for r in self.roles if r.kind == "output")


@record
class Candidate:
    """One point of a variant's tuning space.

    Attributes:
        workgroup_size: work-items per work-group.
        items_per_thread: elements each work-item handles (1 = one element per work-item).
        options: variant-specific knobs (``{"slice_rows": 32}``), as a sorted tuple of pairs.
    """

    workgroup_size: int = 256
    items_per_thread: int = 1
    options: tuple[tuple[str, Any], ...] = ()

    def option(self, name: str, default: Any = None) -> Any:
        """Return option ``name`` or ``default``."""
        return dict(self.options).get(name, default)

    def with_options(self, **options: Any) -> Candidate:
        """Return a copy with ``options`` merged in."""
        merged = dict(self.options) | options
        return Candidate(self.workgroup_size, self.items_per_thread, tuple(sorted(merged.items())))

    def label(self) -> str:
        """A short readable id (``wg256-ipt4-slice_rows=32``)."""
        extra = "".join(f"-{k}={v}" for k, v in self.options)
        return f"wg{self.workgroup_size}-ipt{self.items_per_thread}{extra}"


def resolve(ref: str | Callable[..., Any]) -> Callable[..., Any]:
    """Return the callable named by ``"package.module:function"`` (or ``ref`` itself).

    Raises:
        InputError: the string is not ``module:attribute`` or does not resolve.
    """
    if callable(ref):
        return ref
    module, sep, attr = ref.partition(":")
    if not sep:
        raise InputError(f"implementation reference {ref!r}: expected 'module:function'")
    try:
        return getattr(importlib.import_module(module), attr)
    except (ImportError, AttributeError) as e:
        raise InputError(f"implementation reference {ref!r} does not resolve: {e}") from e


@record
class Variant:
    """One implementation of a family, written once in the kernel DSL.

    Attributes:
        name: short variant name; the full name is ``family.variant`` (``spmv.csr_vector``).
        run: ``"module:function"`` (or the callable) ``run(backend, candidate, **args)``
            returning the family's outputs as numpy arrays.
        doc: one line: the algorithm and its source.
        candidates: the tuning space; the first entry is used when ``default`` is None.
        default: ``"module:function"`` (or callable) ``default(backend, **args) ->
            Candidate`` choosing a candidate for one problem (heuristic), or None.
        requires: backend features the variant needs (``("float_atomics",)``).
        dtypes: dtypes the variant supports (empty: the family's).
    """

    name: str
    run: str | Callable[..., Any]
    doc: str = ""
    candidates: tuple[Candidate, ...] = (Candidate(),)
    default: str | Callable[..., Any] | None = None
    requires: tuple[str, ...] = ()
    dtypes: tuple[str, ...] = ()


@record
class Family:
    """A named operation with a reference and variants; see the module docstring.

    Attributes:
        name: family name (``spmv``); lower case, no dots.
        signature: the roles.
        reference: ``"module:function"`` (or callable): the numpy/scipy reference taking the
            same arguments as the Python API.
        variants: the implementations; the first is the default variant.
        doc: one-line summary.
        provider: distribution or plugin that registered it (filled by the registry).
    """

    name: str
    signature: Signature
    reference: str | Callable[..., Any]
    variants: tuple[Variant, ...]
    doc: str = ""
    provider: str = ""
    metadata: Mapping[str, Any] = field(default_factory=dict)

    def variant(self, name: str | None = None) -> Variant:
        """Return variant ``name`` (default: the first).

        Raises:
            InputError: unknown variant (the message lists the known ones).
        """
        if name is None:
            return self.variants[0]
        for v in self.variants:
            if v.name == name or f"{self.name}.{v.name}" == name:
                return v
        raise InputError(f"family {self.name!r}: unknown variant {name!r}; "
                         f"{known_names((v.name for v in self.variants), name)}")

    def full_names(self) -> list[str]:
        """Return ``family.variant`` for every variant."""
        return [f"{self.name}.{v.name}" for v in self.variants]
