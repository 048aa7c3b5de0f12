"""Plugin facade: discover backends, kernel families, passes and pipelines from plugins.

Plugins are modules listed under the ``accy`` entry-point group; they implement the hooks in
:mod:`accy.plugins.hookspecs` with :data:`hookimpl`. Everything here is loaded once per
process on first use and cached (:func:`reset_for_tests` forgets it). A broken plugin never
breaks discovery: it shows up in :func:`plugin_failures` instead.

Example::

    from accy.plugins import backend_descriptors, open_backend

    sorted(backend_descriptors())        # ['cpu', 'recording', 'vulkan']
    be = open_backend("cpu")             # a live accy.backend.Backend, cached
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

from accy.backend import Backend, BackendDescriptor
from accy.errors import AccyError, BackendError, BackendUnavailable, PluginError, known_names

if TYPE_CHECKING:  # pluggy (through these) only when a full discovery runs: see __getattr__
    from accy.plugins.manager import PluginManager

__all__ = [
    "ENTRY_POINT_GROUP",
    "PluginManager",
    "backend_descriptors",
    "call_hook",
    "extra_passes",
    "extra_pipelines",
    "get_plugin_manager",
    "hookimpl",
    "hookspec",
    "kernel_families",
    "open_backend",
    "plugin_failures",
    "probe_backend",
    "reset_for_tests",
]

_LOCK = threading.RLock()
_manager: PluginManager | None = None
_open: dict[str, Backend] = {}

_BACKEND_MEMBERS = (
    "name", "capabilities", "target_profile", "compile", "emit", "load", "allocate", "write",
    "read", "fill", "copy", "free", "launch", "create_stream", "create_event", "synchronize",
    "destroy",
)


def __getattr__(name: str) -> Any:
    """``hookimpl``, ``hookspec``, ``PluginManager`` and ``ENTRY_POINT_GROUP``, imported on
    first use: opening one recorded backend (:mod:`accy.plugins.fast_backend`) needs no
    pluggy."""
    if name in ("hookimpl", "hookspec"):
        from accy.plugins import hookspecs

        return getattr(hookspecs, name)
    if name in ("PluginManager", "ENTRY_POINT_GROUP"):
        from accy.plugins import manager

        return getattr(manager, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def get_plugin_manager() -> PluginManager:
    """Return the process-wide :class:`PluginManager`, loading plugins on first call."""
    global _manager
    with _LOCK:
        if _manager is None:
            from accy.plugins.manager import PluginManager

            _manager = PluginManager()
        return _manager


def call_hook(hook: str) -> list[Any]:
    """Return the concatenated results of ``hook`` over all plugins (failures isolated)."""
    with _LOCK:
        return get_plugin_manager().items(hook)


def backend_descriptors() -> dict[str, BackendDescriptor]:
    """Return every discovered backend's descriptor by name, testing-only ones included."""
    with _LOCK:
        return dict(get_plugin_manager().backends())


def kernel_families() -> list[Any]:
    """Return the family descriptors of every plugin's ``accy_kernel_families()`` hook."""
    return call_hook("accy_kernel_families")


def extra_passes() -> list[Any]:
    """Return the items of every plugin's ``accy_passes()`` hook (classes, pairs, dicts)."""
    return call_hook("accy_passes")


def extra_pipelines() -> list[Any]:
    """Return the items of every plugin's ``accy_pipelines()`` hook (pairs or dicts)."""
    return call_hook("accy_pipelines")


def plugin_failures() -> list[PluginError]:
    """Return every plugin failure so far, after running all hooks once.

    Includes import errors, misspelt hooks, hooks that raised or returned a non-list,
    backend protocol version mismatches and backend names provided twice.
    """
    with _LOCK:
        manager = get_plugin_manager()
        manager.backends()
        for hook in ("accy_kernel_families", "accy_passes", "accy_pipelines"):
            manager.call(hook)
        return list(manager.failures)


def probe_backend(name: str) -> tuple[bool, str]:
    """Return ``(available, reason)`` for backend ``name`` without opening it.

    A probe that raises counts as unavailable, with the exception as the reason.

    Raises:
        BackendUnavailable: no plugin provides ``name``.
    """
    return _probe(_descriptor(name))


def _probe(desc: BackendDescriptor) -> tuple[bool, str]:
    try:
        result = desc.probe()
    except Exception as e:  # noqa: BLE001  (a probe must not break discovery)
        return False, f"probe raised {type(e).__name__}: {e}"
    return bool(result.available), result.reason


def open_backend(name: str) -> Backend:
    """Return the live backend ``name``, opening it on first use (cached per process).

    Raises:
        BackendUnavailable: no plugin provides ``name`` (the message lists the known
            backends), its probe says it cannot run here (the message gives the reason), or
            opening it failed.
        PluginError: two plugins provide ``name``.
        BackendError: the opened object does not implement the backend protocol.
    """
    with _LOCK:
        backend = _open.get(name)
        if backend is not None:
            return backend
        desc = _recorded_descriptor(name) if _manager is None else None
        if desc is None:
            desc = _descriptor(name)
        available, reason = _probe(desc)
        if not available:
            raise BackendUnavailable(f"backend '{name}' is unavailable: {reason}",
                                     backend=name, reason=reason)
        try:
            backend = desc.open()
        except AccyError:
            raise
        except Exception as e:
            reason = f"{type(e).__name__}: {e}"
            raise BackendUnavailable(f"backend '{name}' failed to open: {reason}",
                                     backend=name, reason=reason) from e
        missing = [m for m in _BACKEND_MEMBERS if not hasattr(backend, m)]
        if missing:
            raise BackendError(f"backend '{name}' does not implement the backend protocol: "
                               f"missing {', '.join(missing)}")
        _open[name] = backend
        return backend


def reset_for_tests(manager: PluginManager | None = None) -> None:
    """Forget the plugin manager, hook results and opened backends.

    Args:
        manager: use this manager from now on (e.g. one built from test entry points);
            default: discover the installed plugins again on next use.
    """
    global _manager
    with _LOCK:
        _manager = manager
        _open.clear()


def _recorded_descriptor(name: str) -> BackendDescriptor | None:
    """Backend ``name`` from the one plugin the recorded table names (no pluggy, no other
    plugin imported), or ``None``: then the full discovery answers."""
    from accy import config

    if config.plugin_autoload_disabled():
        return None
    from accy.plugins import fast_backend

    return fast_backend.descriptor(name)


def _descriptor(name: str) -> BackendDescriptor:
    manager = get_plugin_manager()
    duplicate = manager.duplicate(name)
    if duplicate is not None:
        raise PluginError(duplicate.message, plugin=duplicate.plugin,
                          distribution=duplicate.distribution, cause=duplicate.cause)
    descs = manager.backends()
    desc = descs.get(name)
    if desc is None:
        hint = ""
        if manager.failures:
            hint = f"; {len(manager.failures)} plugin(s) failed to load, see `accy backends`"
        raise BackendUnavailable(f"unknown backend {name!r}; {known_names(descs, name)}{hint}",
                                 backend=name, reason="not installed")
    return desc
