"""Open one backend without pluggy: the plugin that the recorded backend table names.

A full discovery (:class:`accy.plugins.manager.PluginManager`) imports pluggy and every
installed plugin and calls each one's hooks: ~7 ms of a warm-cache first call that needs
one backend. When a full discovery of the installed plugins found every backend exactly once
and no plugin failed, it records which entry point provides each backend
(:func:`accy.plugins.entry_cache.store_backends`, kept per installation state: installing or
removing any distribution invalidates it). :func:`descriptor` then imports only that entry
point's module and calls its ``accy_backends`` function directly. Anything unexpected (no
table, the name not in it, an import error, a hook that raises or no longer returns the
backend) answers ``None``, and the caller does the full discovery, which reports problems
as it always has.

Loading this module imports neither pluggy nor importlib.metadata.
"""

from __future__ import annotations

from types import FunctionType, ModuleType

from accy.backend import API_VERSION, BackendDescriptor
from accy.plugins import entry_cache

__all__ = ["GROUP", "descriptor", "mark_hookimpl"]

GROUP = "accy"
"""The entry-point group of accy plugins (``accy.plugins.ENTRY_POINT_GROUP``)."""


def mark_hookimpl(function: FunctionType) -> FunctionType:
    """Mark ``function`` as an accy hook implementation without importing pluggy: the same
    ``accy_impl`` options ``pluggy.HookimplMarker("accy")`` sets with no arguments (for
    plugins that want a pluggy-free import; ``accy.plugins.hookimpl`` is equivalent)."""
    function.accy_impl = {"wrapper": False, "hookwrapper": False,  # type: ignore[attr-defined]
                          "optionalhook": False, "tryfirst": False, "trylast": False,
                          "specname": None}
    return function


def descriptor(name: str) -> BackendDescriptor | None:
    """The descriptor of backend ``name`` from the one plugin the recorded table names, or
    ``None`` (then use the full discovery). Never raises for a plugin's fault."""
    entries, providers = entry_cache.entry_points_and_backends(GROUP)
    plugin = providers.get(name)
    if plugin is None:
        return None
    matches = [ep for ep in entries if ep.name == plugin]
    if len(matches) != 1:
        return None
    try:
        module = matches[0].load()
    except Exception:  # noqa: BLE001  (the full discovery reports it)
        return None
    hook = vars(module).get("accy_backends") if isinstance(module, ModuleType) else None
    opts = getattr(hook, "accy_impl", None)
    if type(hook) is not FunctionType or not isinstance(opts, dict) or opts.get("specname") \
            or opts.get("wrapper") or opts.get("hookwrapper"):
        return None
    try:
        result = hook()
    except Exception:  # noqa: BLE001  (the full discovery reports it)
        return None
    if not isinstance(result, list | tuple):
        return None
    found = [d for d in result if isinstance(d, BackendDescriptor) and d.name == name]
    if len(found) != 1 or found[0].api_version != API_VERSION:
        return None
    return found[0]
