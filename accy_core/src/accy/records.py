"""Record classes made without ``exec``: :func:`record`, a cheap twin of ``@dataclass``.

``dataclasses.dataclass`` writes the source text of every method it adds (``__init__``,
``__repr__``, ``__eq__``, ``__hash__``, a frozen class's ``__setattr__``/``__delattr__``)
and compiles it with ``exec`` while the class is being defined: 0.3-0.7 ms per class on the
2-core machine, ~25 ms for the ~50 classes a warm-cache first call used to import (kernel
IR, launch graphs, backend descriptions). :func:`record` builds the same methods from
functions compiled once with this module: ``__init__`` from a per-arity template whose code
object gets the field names (``CodeType.replace``), the others as closures over the fields.
Defining a record costs ~20 us.

What a record class has, as the equivalent ``@dataclass(frozen=..., slots=...)`` would:

- ``__init__(self, *fields)`` with positional or keyword arguments and the class body's
  defaults; ``dataclasses.field(default=..., default_factory=..., compare=..., hash=...,
  repr=...)`` work as in a dataclass; ``__post_init__`` is called when defined;
- ``__eq__`` over the compared fields (same class only), ``__hash__`` for frozen records
  (``None``, unhashable, otherwise), ``__repr__`` ``Name(field=value, ...)``,
  ``__match_args__`` (``match Binary(op, a, b, dt):``);
- frozen: assignment and deletion raise ``dataclasses.FrozenInstanceError``;
- ``slots=True``: ``__slots__`` are the field names (no ``__dict__``);
- ``__dataclass_fields__`` and ``__dataclass_params__``, so ``dataclasses.fields``,
  ``replace``, ``asdict`` and ``is_dataclass`` treat it as a dataclass, and a frozen
  record can be the base of a ``@dataclass(frozen=True)`` subclass (as of a frozen
  dataclass: its ``__init__`` takes the record's fields first, then its own); pickling
  through ``__reduce__`` (the class and the field values; a subclass's by field name).

Not supported (``TypeError`` when the class is defined): base classes other than
``object``, ``InitVar``/keyword-only fields, a field without a default after one with a
default. A non-frozen record cannot be the base of a ``@dataclass``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from operator import attrgetter
from types import FunctionType, SimpleNamespace
from typing import Any, TypeVar

from accy import _record_templates as _t

__all__ = ["record"]

T = TypeVar("T")

_osa = object.__setattr__
_MISSING = dataclasses.MISSING


def _generic_init(names: tuple[str, ...], defaults: tuple, setters: list) -> Callable:
    """``__init__`` for records of more fields than the largest template."""
    n, first_default = len(names), len(names) - len(defaults)
    index = {name: k for k, name in enumerate(names)}

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if len(args) > n:
            raise TypeError(f"__init__() takes {n + 1} positional arguments but "
                            f"{len(args) + 1} were given")
        values = list(args) + [_MISSING] * (n - len(args))
        for key, value in kwargs.items():
            k = index.get(key)
            if k is None:
                raise TypeError(f"__init__() got an unexpected keyword argument {key!r}")
            if values[k] is not _MISSING:
                raise TypeError(f"__init__() got multiple values for argument {key!r}")
            values[k] = value
        for k, value in enumerate(values):
            if value is _MISSING:
                if k < first_default:
                    raise TypeError(f"__init__() missing required argument: {names[k]!r}")
                value = defaults[k - first_default]
            setters[k](self, value)

    return __init__


def _from_template(cls: type, template: Callable, names: tuple[str, ...],
                   env: dict[str, Any] | None = None, defaults: tuple = ()) -> Callable:
    """A copy of ``template`` whose ``a<k>`` parameters and attributes are ``names[k]``."""
    code = template.__code__
    rename = {f"a{k}": name for k, name in enumerate(names)}
    code = code.replace(
        co_varnames=tuple(rename.get(v, v) for v in code.co_varnames),
        co_names=tuple(rename.get(v, v) for v in code.co_names),
        co_qualname=f"{cls.__qualname__}.{template.__name__.rstrip('0123456789')}")
    scope = {"__builtins__": __builtins__, "__name__": cls.__module__, **(env or {})}
    return FunctionType(code, scope, code.co_qualname.rsplit(".", 1)[-1], defaults or None)


def _make_init(cls: type, names: tuple[str, ...], defaults: tuple, setters: list) -> Callable:
    if len(names) >= len(_t.INIT) or "self" in names:
        return _generic_init(names, defaults, setters)
    env = {f"_s{k}": s for k, s in enumerate(setters)}
    return _rename(_from_template(cls, _t.INIT[len(names)], names, env, defaults), "__init__")


def _rename(f: Callable, name: str) -> Callable:
    f.__name__ = name
    f.__qualname__ = f"{f.__qualname__.rsplit('.', 1)[0]}.{name}"
    return f


def _with_factories(init: Callable, factories: list[tuple[int, Callable, Callable]],
                    names: tuple[str, ...]) -> Callable:
    """Wrap ``init`` so that fields left at the factory sentinel get ``factory()``."""
    getters = [(attrgetter(names[k]), setter, factory) for k, setter, factory in factories]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        init(self, *args, **kwargs)
        for get, setter, factory in getters:
            if get(self) is _FACTORY:
                setter(self, factory())

    return __init__


class _Factory:
    """The default of a ``default_factory`` field until ``__init__`` replaces it."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "<factory>"


_FACTORY = _Factory()


def _key(names: tuple[str, ...]) -> Callable[[Any], Any]:
    if not names:
        return lambda self: ()
    get = attrgetter(*names)
    if len(names) == 1:
        return lambda self: (get(self),)
    return get


def _eq(cls: type, compare: tuple[str, ...]) -> Callable:
    if len(compare) < len(_t.EQ):
        return _rename(_from_template(cls, _t.EQ[len(compare)], compare), "__eq__")
    key = _key(compare)

    def __eq__(self, other: Any) -> Any:
        if other.__class__ is self.__class__:
            return key(self) == key(other)
        return NotImplemented

    return __eq__


def _hash(cls: type, hashed: tuple[str, ...]) -> Callable:
    if len(hashed) < len(_t.HASH):
        return _rename(_from_template(cls, _t.HASH[len(hashed)], hashed), "__hash__")
    key = _key(hashed)

    def __hash__(self) -> int:
        return hash(key(self))

    return __hash__


def _methods(cls: type, names: tuple[str, ...], compare: tuple[str, ...],
             hashed: tuple[str, ...], shown: tuple[str, ...], frozen: bool,
             made: list[type]) -> dict[str, Any]:
    """The methods of record ``cls`` (named after it); ``made`` will hold the class built."""
    all_values = _key(names)
    show = [(name, attrgetter(name)) for name in shown]

    def __repr__(self) -> str:
        inner = ", ".join(f"{name}={get(self)!r}" for name, get in show)
        return f"{self.__class__.__qualname__}({inner})"

    def __reduce__(self) -> tuple:
        if self.__class__ is made[0]:
            return made[0], all_values(self)
        # a dataclass subclass: its fields by name (its __init__ orders them its own way)
        names = tuple(n for n, f in self.__dataclass_fields__.items() if f.init)
        return _rebuild, (self.__class__, names, tuple(getattr(self, n) for n in names))

    def __setattr__(self, name: str, value: Any) -> None:
        raise dataclasses.FrozenInstanceError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        raise dataclasses.FrozenInstanceError(f"cannot delete field {name!r}")

    out: dict[str, Any] = {"__eq__": _eq(cls, compare), "__repr__": __repr__,
                           "__reduce__": __reduce__}
    if frozen:
        out.update(__hash__=_hash(cls, hashed), __setattr__=__setattr__,
                   __delattr__=__delattr__)
    else:
        out["__hash__"] = None  # as a dataclass with eq=True and frozen=False
    for f in (__repr__, __reduce__, __setattr__, __delattr__):
        f.__qualname__ = f"{cls.__qualname__}.{f.__name__}"
    return out


def record(cls: type[T] | None = None, *, frozen: bool = True, slots: bool = False) -> Any:
    """Make ``cls`` a record class (see the module docstring): ``@record``,
    ``@record(frozen=False)``, ``@record(slots=True)``.

    Raises:
        TypeError: ``cls`` has a base class, an ``InitVar`` or keyword-only field, or a field
            without a default after one with a default.
    """
    if cls is None:
        return lambda c: _build(c, frozen, slots)
    return _build(cls, frozen, slots)


def _fields(cls: type, body: dict[str, Any]) -> tuple[dict[str, dataclasses.Field], list, list]:
    """The fields of ``cls`` (their defaults popped from ``body``), the defaults of the
    trailing ones (``_FACTORY`` for a factory's) and ``(index, factory)`` pairs."""
    fields: dict[str, dataclasses.Field] = {}
    defaults: list[Any] = []
    factories: list[tuple[int, Callable]] = []
    for name, annotation in body.get("__annotations__", {}).items():
        text = annotation if isinstance(annotation, str) else repr(annotation)
        if text.startswith(("ClassVar", "typing.ClassVar")):
            continue
        value = body.pop(name, _MISSING)
        f = value if isinstance(value, dataclasses.Field) else dataclasses.field(default=value)
        if "InitVar" in text or "KW_ONLY" in text or f.kw_only is True or not f.init:
            raise TypeError(f"record {cls.__qualname__}.{name}: InitVar, KW_ONLY, kw_only and "
                            "init=False fields are not supported")
        f.name, f.type = name, annotation
        f.kw_only = False  # as dataclass resolves it: a dataclass subclass takes it by position
        f._field_type = dataclasses._FIELD  # what dataclasses.fields() looks for
        if f.default is not _MISSING:
            defaults.append(f.default)
        elif f.default_factory is not _MISSING:
            factories.append((len(fields), f.default_factory))
            defaults.append(_FACTORY)
        elif defaults:
            raise TypeError(f"record {cls.__qualname__}: field {name!r} without a default "
                            "follows a field with one")
        fields[name] = f
    return fields, defaults, factories


def _build(cls: type, frozen: bool, slots: bool) -> type:
    if cls.__bases__ != (object,):
        raise TypeError(f"record {cls.__qualname__}: base classes are not supported")
    body = dict(cls.__dict__)
    fields, defaults, factories = _fields(cls, body)
    names = tuple(fields)
    compare = tuple(n for n, f in fields.items() if f.compare)
    hashed = tuple(n for n, f in fields.items()
                   if (f.hash if f.hash is not None else f.compare))
    shown = tuple(n for n, f in fields.items() if f.repr)
    made: list[type] = []
    extra: dict[str, Any] = {
        "__dataclass_fields__": fields,
        # what a @dataclass subclass reads of its bases (only ``frozen``; the rest for show)
        "__dataclass_params__": SimpleNamespace(
            init=True, repr=True, eq=True, order=False, unsafe_hash=False, frozen=frozen,
            match_args=True, kw_only=False, slots=slots, weakref_slot=False),
        "__match_args__": names,
    }
    for name, method in _methods(cls, names, compare, hashed, shown, frozen, made).items():
        if name not in body or name in ("__setattr__", "__delattr__"):
            extra[name] = method
    post = body.get("__post_init__")
    if not slots:
        # completed in place: setting attributes costs ~3 us, a second class ~70 us (and
        # type creation is most of a record's cost: ~34 records on a warm-cache first call)
        extra["__init__"] = _full_init(cls, names, defaults, factories, post,
                                       [_dict_setter(name) for name in names])
        for n, f in fields.items():  # as a dataclass: the class attribute holds the default
            if f.default is not _MISSING:
                extra[n] = f.default
            elif n in cls.__dict__:  # a field(default_factory=...)
                delattr(cls, n)
        for name, value in extra.items():
            setattr(cls, name, value)
        made.append(cls)
        return cls
    for key in ("__dict__", "__weakref__"):
        body.pop(key, None)
    body["__slots__"] = names
    body.update(extra)
    new = type(cls)(cls.__name__, cls.__bases__, body)
    new.__qualname__ = cls.__qualname__
    made.append(new)
    # the setters are the new class's slot descriptors
    new.__init__ = _full_init(cls, names, defaults, factories, post,
                              [getattr(new, name).__set__ for name in names])
    return new


def _full_init(cls: type, names: tuple[str, ...], defaults: list, factories: list,
               post: Callable | None, setters: list) -> Callable:
    init = _make_init(cls, names, tuple(defaults), setters)
    if factories:
        init = _with_factories(init, [(k, setters[k], fac) for k, fac in factories], names)
    if post is not None:
        init = _with_post_init(init, post)
    return init


def _dict_setter(name: str) -> Callable[[Any, Any], None]:
    def set_field(self: Any, value: Any) -> None:
        _osa(self, name, value)

    return set_field


def _with_post_init(init: Callable, post: Callable) -> Callable:
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        init(self, *args, **kwargs)
        post(self)

    return __init__


def _rebuild(cls: type, names: tuple[str, ...], values: tuple) -> Any:
    """Unpickle an instance of a dataclass subclass of a record (see ``__reduce__``)."""
    return cls(**dict(zip(names, values, strict=True)))
