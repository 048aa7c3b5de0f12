"""The pass contract: :class:`Pass`, the :class:`PassContext` it runs in, and its records.

A pass is a frozen dataclass whose fields are its options::

    @dataclass(frozen=True)
    class EinsumLoweringPass(Pass):
        name: ClassVar[str] = "einsum-lowering"
        summary: ClassVar[str] = "einsum → dot_general with contraction-path planning"
        strategy: str = field(default="greedy", metadata={"choices": ("greedy", "beam")})
        beam_width: int = 8

        def run(self, module: Module, ctx: PassContext) -> bool: ...

It is written ``einsum-lowering{strategy=beam,beam-width=8}`` in a text pipeline (option
names are the field names in kebab-case) and prints back byte for byte
(:mod:`accy.passes.pipeline`): a pass prints the options it was given explicitly (in text
or to its constructor) and those that differ from their defaults, in field order. Equality
compares option values only. Option types: ``int``, ``float``, ``bool``, ``str``,
``tuple[int, ...]``, and ``str`` restricted by a ``choices`` metadata entry.

Contract: valid IR in, valid IR out, same value semantics (unless the pass documents
otherwise, like a lowering that changes the op set but not the values computed).
"""

from __future__ import annotations

import dataclasses
import typing
from dataclasses import dataclass, field
from typing import Any, ClassVar

from accy.errors import PassError
from accy.passes.analysis import AnalysisManager

if typing.TYPE_CHECKING:
    from accy.ir import Module

__all__ = [
    "OPTION_KINDS",
    "AnalysisRecord",
    "Pass",
    "PassContext",
    "PassOption",
    "PassRecord",
]

#: Option kinds a pass field may have (``choice`` is a ``str`` field with ``choices``).
OPTION_KINDS = ("int", "float", "bool", "str", "ints", "choice")

_KIND_OF_TYPE = {
    "int": "int",
    "float": "float",
    "bool": "bool",
    "str": "str",
    "tuple[int, ...]": "ints",
    "Tuple[int, ...]": "ints",
    "typing.Tuple[int, ...]": "ints",
}


@dataclass(frozen=True)
class PassOption:
    """One option of a pass, derived from a dataclass field.

    Attributes:
        field_name: the Python field name (``beam_width``).
        text_name: the name in pipeline text (``beam-width``).
        kind: one of :data:`OPTION_KINDS`.
        default: the default value, or ``dataclasses.MISSING`` for a required option.
        choices: allowed values of a ``choice`` option, else ``()``.
    """

    field_name: str
    text_name: str
    kind: str
    default: Any
    choices: tuple[str, ...] = ()

    @property
    def required(self) -> bool:
        return self.default is dataclasses.MISSING

    def describe(self) -> str:
        """``beam-width: int = 8`` style, for error messages and ``accy passes``."""
        kind = "|".join(self.choices) if self.kind == "choice" else self.kind
        if self.kind == "ints":
            kind = "[int,...]"
        default = "" if self.required else f" = {self.default!r}"
        return f"{self.text_name}: {kind}{default}"


def _type_name(tp: Any) -> str:
    if isinstance(tp, str):
        return tp.strip()
    if tp in (int, float, bool, str):
        return tp.__name__
    return str(tp)


def _field_kind(cls: type, f: dataclasses.Field) -> str:
    try:
        hints = typing.get_type_hints(cls)
    except Exception:  # noqa: BLE001  (unresolvable annotation: fall back to its text)
        hints = {}
    kind = _KIND_OF_TYPE.get(_type_name(hints.get(f.name, f.type)))
    if kind is None:
        raise PassError(
            f"pass class {cls.__name__}: option '{f.name}' has unsupported type {f.type!r}; "
            "use int, float, bool, str or tuple[int, ...]",
            pass_name=getattr(cls, "name", ""),
        )
    if f.metadata.get("choices"):
        if kind != "str":
            raise PassError(
                f"pass class {cls.__name__}: option '{f.name}' has choices but is not a str",
                pass_name=getattr(cls, "name", ""),
            )
        return "choice"
    return kind


def _default(f: dataclasses.Field) -> Any:
    if f.default is not dataclasses.MISSING:
        return f.default
    if f.default_factory is not dataclasses.MISSING:
        return f.default_factory()
    return dataclasses.MISSING


@dataclass(frozen=True)
class Pass:
    """Base of every pass: a frozen dataclass whose fields are its options.

    Class attributes:
        name: kebab-case pipeline name (``canonicalize``).
        summary: one line for ``accy passes`` and docs.
        preserves: names of analyses that stay valid after this pass changed the module.
    """

    name: ClassVar[str] = ""
    summary: ClassVar[str] = ""
    preserves: ClassVar[tuple[str, ...]] = ()

    def __new__(cls, *args: Any, **kwargs: Any) -> typing.Self:
        # Remember which options the caller spelled out, so that printing repeats them
        # (``einsum-lowering{beam-width=8}`` prints back as written, default or not).
        self = super().__new__(cls)
        names = [f.name for f in dataclasses.fields(cls)]
        object.__setattr__(self, "_accy_given", frozenset(names[: len(args)]) | frozenset(kwargs))
        return self

    @property
    def given_options(self) -> frozenset[str]:
        """Field names passed explicitly when this pass was made (parsed or constructed)."""
        return self.__dict__.get("_accy_given", frozenset())

    def __post_init__(self) -> None:
        for opt in type(self).options():
            value = getattr(self, opt.field_name)
            if opt.kind == "ints" and isinstance(value, list):
                object.__setattr__(self, opt.field_name, tuple(value))
            elif opt.kind == "float" and isinstance(value, int) and not isinstance(value, bool):
                object.__setattr__(self, opt.field_name, float(value))
            elif opt.kind == "choice" and value not in opt.choices:
                raise PassError(
                    f"pass '{self.name}': option '{opt.text_name}' must be one of "
                    f"{', '.join(opt.choices)}, got {value!r}",
                    pass_name=self.name,
                )

    @classmethod
    def options(cls) -> tuple[PassOption, ...]:
        """The options of this pass class, in field order.

        Raises:
            PassError: a field has a type that pipeline text cannot express.
        """
        cached = cls.__dict__.get("_accy_options")
        if cached is not None:
            return cached
        opts = tuple(
            PassOption(
                f.name,
                f.name.replace("_", "-"),
                _field_kind(cls, f),
                _default(f),
                tuple(f.metadata.get("choices", ())),
            )
            for f in dataclasses.fields(cls)
        )
        type.__setattr__(cls, "_accy_options", opts)
        return opts

    def run(self, module: Module, ctx: PassContext) -> bool | None:
        """Rewrite ``module`` in place; return whether anything changed (``None``: assume so)."""
        raise NotImplementedError(f"pass '{self.name}' does not implement run()")

    def __str__(self) -> str:
        from accy.passes.pipeline import print_pass

        return print_pass(self)


@dataclass(frozen=True)
class PassRecord:
    """Statistics of one pass run (one pipeline position).

    Attributes:
        name: the pass name.
        runs: number of runs merged into this record (1 for a single position).
        wall_ns: wall time of ``run`` in nanoseconds (verification excluded).
        ops_before / ops_after: :meth:`Module.op_count` before and after.
        position: index in the pipeline (0-based), -1 for merged records.
        changed: whether the pass reported a change.
    """

    name: str
    runs: int
    wall_ns: int
    ops_before: int
    ops_after: int
    position: int = -1
    changed: bool = True

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


@dataclass(frozen=True)
class AnalysisRecord:
    """Cache statistics of one analysis: ``hits`` reused a result, ``misses`` computed one."""

    name: str
    hits: int
    misses: int

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


@dataclass
class PassContext:
    """What a pass may read besides the module.

    Attributes:
        target_profile: the backend's ``TargetProfile``, or ``None`` (no legalization).
        backend: backend name, or ``None``.
        analyses: cached analyses (see :meth:`get_analysis`).
        records: every :class:`PassRecord` produced while running with this context.
        options: free-form settings for passes (string keys).
    """

    target_profile: Any = None
    backend: str | None = None
    analyses: AnalysisManager = field(default_factory=AnalysisManager)
    records: list[PassRecord] = field(default_factory=list)
    options: dict[str, Any] = field(default_factory=dict)

    def get_analysis(self, analysis: type, module: Module) -> Any:
        """Return ``analysis`` computed on ``module``, cached until the module changes."""
        return self.analyses.get(analysis, module)
