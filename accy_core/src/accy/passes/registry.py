"""Lazy registry of passes and named pipelines.

Built-in passes are ``name -> "module:ClassName"`` strings: listing names imports no pass
module, looking one up imports only that module. Third-party passes come from
:func:`register_pass` or from the ``accy_passes()`` hook of :mod:`accy.plugins`; named
pipelines from :func:`register_pipeline` or the ``accy_pipelines()`` hook. A plugin hook
may return pass classes, ``(name, class or "module:Class")`` pairs or ``{name: ...}``
dicts (pipelines: ``(name, text)`` pairs or ``{name: text}`` dicts). A duplicate name
with a different provider is an error naming both.
"""

from __future__ import annotations

import importlib
import threading
from collections.abc import Iterator
from typing import Any

from accy.errors import PassError, known_names
from accy.passes.base import Pass

__all__ = [
    "find_pass_class",
    "get_pass_class",
    "get_pipeline",
    "pass_names",
    "pipeline_names",
    "plugin_problems",
    "register_pass",
    "register_pipeline",
]

_BUILTIN: dict[str, str] = {
    "verify": "accy.passes.verify:VerifyPass",
    "canonicalize": "accy.passes.canonicalize:CanonicalizePass",
    "constant-fold": "accy.passes.constant_fold:ConstantFoldPass",
    "cse": "accy.passes.cse:CSEPass",
    "dce": "accy.passes.dce:DCEPass",
    "activation-lowering": "accy.passes.activation_lowering:ActivationLoweringPass",
    "einsum-lowering": "accy.passes.einsum_lowering:EinsumLoweringPass",
    "reduction-lowering": "accy.passes.reduction_lowering:ReductionLoweringPass",
    "reduction-split": "accy.passes.reduction_split:ReductionSplitPass",
    "indexing-lowering": "accy.passes.indexing_lowering:IndexingLoweringPass",
    "loop-carry": "accy.passes.loop_carry:LoopCarryPass",
    "fusion": "accy.passes.fusion:FusionPass",
    "loop-in-place": "accy.passes.loop_in_place:LoopInPlacePass",
    "bufferize": "accy.passes.bufferize:BufferizePass",
    "outline-kernels": "accy.passes.outline_kernels:OutlineKernelsPass",
    "legalize": "accy.passes.legalize:LegalizePass",
}

_entries: dict[str, type[Pass] | str] = dict(_BUILTIN)  # name -> class or "module:Class"
_providers: dict[str, str] = dict.fromkeys(_BUILTIN, "accy-core")
_pipelines: dict[str, str] = {}
_pipeline_providers: dict[str, str] = {}
_problems: list[str] = []
_plugins_loaded = False
_PLUGIN_LOCK = threading.RLock()
_PLUGIN_LOCK_DEPTH: list[int] = []  # non-empty while this process adds plugins


def _provider_of(cls: type) -> str:
    return f"{cls.__module__}:{cls.__qualname__}"


def _add_pass(name: str, target: type[Pass] | str, provider: str, replace: bool) -> None:
    old = _entries.get(name)
    if old is not None and not replace:
        same = old is target or (isinstance(target, type) and old == _provider_of(target))
        if not same:
            raise PassError(
                f"pass '{name}' is registered twice: by {_providers[name]} and by {provider}; "
                "rename one of them",
                pass_name=name,
            )
    _entries[name] = target
    _providers[name] = provider


def register_pass(cls: type[Pass] | None = None, *, replace: bool = False) -> Any:
    """Register a pass class under its ``name``; usable as ``@register_pass``.

    Raises:
        PassError: the class has no ``name``, or another class already has this name (and
            ``replace`` is false).
    """

    def deco(c: type[Pass]) -> type[Pass]:
        if not (isinstance(c, type) and issubclass(c, Pass)) or not c.name:
            raise PassError(f"register_pass: {c!r} is not a Pass subclass with a name")
        c.options()  # reject unsupported option types now, not at first parse
        _add_pass(c.name, c, _provider_of(c), replace)
        return c

    return deco if cls is None else deco(cls)


def _load(name: str, target: str) -> type[Pass]:
    module_name, _, class_name = target.partition(":")
    try:
        cls = getattr(importlib.import_module(module_name), class_name)
    except (ImportError, AttributeError) as e:
        raise PassError(
            f"pass '{name}' could not be loaded from {target}: {e}", pass_name=name
        ) from e
    if not (isinstance(cls, type) and issubclass(cls, Pass)) or cls.name != name:
        raise PassError(
            f"pass '{name}': {target} is not a Pass subclass named '{name}'", pass_name=name
        )
    return cls


def find_pass_class(name: str) -> type[Pass] | None:
    """The pass class named ``name``, or ``None`` if no pass has that name.

    Raises:
        PassError: the registered module cannot be imported or holds no such class.
    """
    if name not in _entries:
        _load_plugins()
    target = _entries.get(name)
    if target is None:
        return None
    if isinstance(target, str):
        target = _load(name, target)
        _entries[name] = target
    return target


def get_pass_class(name: str) -> type[Pass]:
    """The pass class named ``name``.

    Raises:
        PassError: unknown pass (lists the known ones), or its module fails to import.
    """
    cls = find_pass_class(name)
    if cls is None:
        raise PassError(f"unknown pass '{name}'; {known_names(pass_names(), name)}", pass_name=name)
    return cls


def pass_names() -> list[str]:
    """Every registered pass name, sorted (imports no pass module)."""
    _load_plugins()
    return sorted(_entries)


def register_pipeline(name: str, text: str, *, provider: str = "", replace: bool = False) -> None:
    """Register pipeline ``text`` under ``name`` (checked when first used).

    Raises:
        PassError: another pipeline already has this name with a different text.
    """
    old = _pipelines.get(name)
    if old is not None and old != text and not replace:
        raise PassError(
            f"pipeline '{name}' is registered twice: by {_pipeline_providers[name]} and by "
            f"{provider or 'register_pipeline'}; rename one of them"
        )
    _pipelines[name] = text
    _pipeline_providers[name] = provider or "register_pipeline"


def _ensure_stages() -> None:
    import accy.passes.stages  # noqa: F401  (registers the six stage pipelines)


def get_pipeline(name: str) -> str:
    """The text of the named pipeline.

    Raises:
        PassError: unknown pipeline (lists the known ones).
    """
    _ensure_stages()
    if name not in _pipelines:
        _load_plugins()
    if name not in _pipelines:
        raise PassError(f"unknown pipeline '{name}'; {known_names(_pipelines, name)}")
    return _pipelines[name]


def pipeline_names() -> list[str]:
    """Every registered pipeline name, sorted."""
    _ensure_stages()
    _load_plugins()
    return sorted(_pipelines)


def plugin_problems() -> list[str]:
    """Why plugin passes or pipelines could not be loaded (empty when all went well)."""
    _load_plugins()
    return list(_problems)


def _hook_results(hook: str) -> list[Any]:
    """Results of plugin hook ``hook``; ``[]`` when accy.plugins is absent."""
    try:
        plugins = importlib.import_module("accy.plugins")
    except ModuleNotFoundError as e:
        if e.name in ("accy.plugins", "pluggy"):
            return []
        raise
    caller = getattr(plugins, "call_hook", None)
    if callable(caller):
        return list(caller(hook) or [])
    get_pm = getattr(plugins, "get_plugin_manager", None) or getattr(
        plugins, "plugin_manager", None
    )
    if callable(get_pm):
        return list(getattr(get_pm().hook, hook)() or [])
    return []


def _pairs(results: Any) -> Iterator[tuple[str | None, Any]]:
    """Flatten hook results into ``(name or None, target)`` pairs."""
    if isinstance(results, list):
        for r in results:
            yield from _pairs(r)
    elif isinstance(results, dict):
        yield from results.items()
    elif isinstance(results, tuple) and len(results) == 2 and isinstance(results[0], str):
        yield results[0], results[1]
    elif results is not None:
        yield None, results


def _load_plugins() -> None:
    """Add the plugins' passes and pipelines once. The flag is set only when they are in,
    under a lock (the same thread may come back through a hook: an RLock), so that a second
    thread never looks a plugin pipeline up before it is added."""
    global _plugins_loaded
    if _plugins_loaded:
        return
    with _PLUGIN_LOCK:
        if _plugins_loaded or _PLUGIN_LOCK_DEPTH:
            return
        _PLUGIN_LOCK_DEPTH.append(1)
        try:
            _add_plugins()
        finally:
            _PLUGIN_LOCK_DEPTH.clear()
        _plugins_loaded = True


def _add_plugins() -> None:
    for hook, add in (("accy_passes", _add_plugin_pass), ("accy_pipelines", _add_plugin_pipeline)):
        try:
            results = _hook_results(hook)
        except Exception as e:  # noqa: BLE001  (a broken plugin must not break the others)
            _problems.append(f"hook {hook}: {type(e).__name__}: {e}")
            continue
        for name, target in _pairs(results):
            try:
                add(name, target)
            except Exception as e:  # noqa: BLE001
                _problems.append(f"hook {hook}: {name or target!r}: {e}")


def _add_plugin_pass(name: str | None, target: Any) -> None:
    if isinstance(target, type) and issubclass(target, Pass):
        target.options()
        _add_pass(name or target.name, target, _provider_of(target), replace=False)
    elif isinstance(target, str) and name and ":" in target:
        _add_pass(name, target, target, replace=False)
    else:
        raise PassError(f"not a Pass subclass or 'module:Class' string: {target!r}")


def _add_plugin_pipeline(name: str | None, text: Any) -> None:
    name = name or getattr(text, "name", None)
    text = getattr(text, "text", text)
    if not name or not isinstance(text, str):
        raise PassError(f"not a (name, text) pipeline: {text!r}")
    register_pipeline(name, text, provider="plugin")
