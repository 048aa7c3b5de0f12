"""The isolating plugin loader: one broken plugin is reported, the others keep working.

Unlike ``pluggy.PluginManager.load_setuptools_entrypoints``, :class:`PluginManager` loads
the ``accy`` entry points one at a time and calls each hook implementation on its own. An
import error, a misspelt hook, a hook that raises or returns garbage, a backend declaring
another protocol version and a backend name provided twice are each recorded as a
:class:`~accy.errors.PluginError` in :attr:`PluginManager.failures`; the rest is used.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from types import FunctionType, MethodType, ModuleType
from typing import TYPE_CHECKING, Any

import pluggy

from accy import config
from accy.backend import API_VERSION, BackendDescriptor
from accy.errors import PluginError
from accy.plugins import builtin, entry_cache, hookspecs

if TYPE_CHECKING:
    import importlib.metadata

__all__ = ["ENTRY_POINT_GROUP", "PluginManager"]

ENTRY_POINT_GROUP = "accy"
_CORE_DIST = "accy-core"


def _normalize(distribution: str) -> str:
    return re.sub(r"[-_.]+", "-", distribution).lower()


def _cause(e: BaseException) -> str:
    text = str(e)
    return f"{type(e).__name__}: {text}" if text else type(e).__name__


def _failure(plugin: str, distribution: str, cause: str) -> PluginError:
    return PluginError(
        f"plugin '{plugin}' (dist {distribution}) failed: {cause}",
        plugin=plugin, distribution=distribution, cause=cause,
    )


class _Pluggy(pluggy.PluginManager):
    """pluggy's manager, reading a module plugin's functions from its namespace.

    pluggy looks every name of ``dir(plugin)`` up with ``inspect.getattr_static`` (which
    walks the module type's MRO each time): ~40 us per name, a few milliseconds for the
    plugins of a warm-cache first call. A module's hookable attributes are its plain
    functions, so those are read from ``vars(module)`` directly; anything else (classes,
    instances, bound or static methods) goes through pluggy as before.
    """

    def parse_hookimpl_opts(self, plugin: Any, name: str) -> Any:
        if isinstance(plugin, ModuleType):
            value = vars(plugin).get(name)
            if type(value) is FunctionType:
                opts = getattr(value, "accy_impl", None)
                return opts if isinstance(opts, dict) else None
            if not isinstance(value, MethodType | staticmethod | classmethod):
                return None
        return super().parse_hookimpl_opts(plugin, name)


class PluginManager:
    """Load accy plugins in isolation and call their hooks.

    Args:
        autoload: load the ``accy`` entry points; default: unless
            ``ACCY_DISABLE_PLUGIN_AUTOLOAD`` is set. The built-in plugin is always loaded.
        entry_points: entry points to load instead of the installed ones (for tests);
            default: the installed ones, through :mod:`accy.plugins.entry_cache` (no
            importlib.metadata scan while the installation is unchanged).

    Attributes:
        pluggy_manager: the underlying ``pluggy.PluginManager`` (project name ``accy``).
        distributions: plugin name → distribution that provides it.
        failures: every load or hook failure so far, in the order they happened.
    """

    def __init__(self, autoload: bool | None = None,
                 entry_points: Iterable[Any] | None = None) -> None:
        self.pluggy_manager = _Pluggy("accy")
        self.pluggy_manager.add_hookspecs(hookspecs)
        self.distributions: dict[str, str] = {}
        self.failures: list[PluginError] = []
        self._results: dict[str, list[tuple[str, Any]]] = {}
        self._backends: dict[str, BackendDescriptor] | None = None
        self._duplicates: dict[str, PluginError] = {}
        self.register(builtin, "builtin", _CORE_DIST)
        if autoload is None:
            autoload = not config.plugin_autoload_disabled()
        # the installed plugins, all of them: what backends() finds may be recorded for
        # accy.plugins.fast_backend
        self._installed = bool(autoload) and entry_points is None
        if autoload or entry_points is not None:
            if entry_points is None:
                entry_points = entry_cache.entry_points(ENTRY_POINT_GROUP)
            for ep in entry_points:
                self.load_entry_point(ep)

    # ------------------------------------------------------------------------- loading

    def load_entry_point(self, ep: importlib.metadata.EntryPoint | Any) -> bool:
        """Import and register one entry point (an ``importlib.metadata.EntryPoint`` or a
        :class:`~accy.plugins.entry_cache.CachedEntryPoint`); return False (and record why)
        on failure."""
        dist = ep.dist.name if getattr(ep, "dist", None) is not None else "unknown"
        if ep.name in self.distributions:
            if _normalize(self.distributions[ep.name]) != _normalize(dist):
                self.failures.append(_failure(
                    ep.name, dist, f"a plugin named '{ep.name}' is already loaded from "
                    f"dist {self.distributions[ep.name]}; rename one entry point"))
            return False
        try:
            module = ep.load()
        except Exception as e:  # noqa: BLE001  (any import-time error must be isolated)
            self.failures.append(_failure(ep.name, dist, _cause(e)))
            return False
        return self.register(module, ep.name, dist)

    def register(self, plugin: ModuleType | object, name: str, distribution: str) -> bool:
        """Register ``plugin`` under ``name``; return False (and record why) on failure."""
        pm = self.pluggy_manager
        try:
            pm.register(plugin, name=name)
        except Exception as e:  # noqa: BLE001  (validation errors, duplicate objects)
            self.failures.append(_failure(name, distribution, _cause(e)))
            return False
        try:
            pm.check_pending()
        except pluggy.PluginValidationError as e:
            pm.unregister(name=name)
            self.failures.append(_failure(name, distribution, _cause(e)))
            return False
        self.distributions[name] = distribution
        self._results.clear()
        self._backends = None
        return True

    # ------------------------------------------------------------------------- hooks

    def call(self, hook: str) -> list[tuple[str, Any]]:
        """Call every implementation of ``hook`` alone; return ``(plugin name, item)`` pairs.

        Each implementation must return a list (or tuple, or None); its items are returned
        in plugin registration order. A raising implementation or one returning something
        else is recorded in :attr:`failures` and contributes nothing. Results are cached.
        """
        cached = self._results.get(hook)
        if cached is not None:
            return cached
        caller = getattr(self.pluggy_manager.hook, hook)
        out: list[tuple[str, Any]] = []
        for impl in caller.get_hookimpls():
            if getattr(impl, "hookwrapper", False) or getattr(impl, "wrapper", False):
                continue
            name = impl.plugin_name
            dist = self.distributions.get(name, "unknown")
            try:
                result = impl.function()
            except Exception as e:  # noqa: BLE001  (a raising hook must be isolated)
                self.failures.append(_failure(name, dist, f"hook {hook} raised {_cause(e)}"))
                continue
            if result is None:
                continue
            if not isinstance(result, list | tuple):
                self.failures.append(_failure(
                    name, dist, f"hook {hook} must return a list, got {type(result).__name__}"))
                continue
            out.extend((name, item) for item in result)
        self._results[hook] = out
        return out

    def items(self, hook: str) -> list[Any]:
        """Return the concatenated items every plugin returned from ``hook``."""
        return [item for _, item in self.call(hook)]

    # ------------------------------------------------------------------------- backends

    def backends(self) -> dict[str, BackendDescriptor]:
        """Return backend descriptors by name (cached; problems go to :attr:`failures`).

        A backend name declared twice keeps the first provider and records a failure naming
        both; :meth:`duplicate` returns that error for the name.
        """
        if self._backends is not None:
            return self._backends
        found: dict[str, BackendDescriptor] = {}
        owner: dict[str, str] = {}
        for plugin, desc in self.call("accy_backends"):
            dist = self.distributions.get(plugin, "unknown")
            problem = self._check_descriptor(desc)
            if problem:
                self.failures.append(_failure(plugin, dist, problem))
            elif desc.name in found:
                first = owner[desc.name]
                error = _failure(
                    plugin, dist,
                    f"backend '{desc.name}' is provided by both plugin '{first}' (dist "
                    f"{self.distributions.get(first, 'unknown')}) and plugin '{plugin}' "
                    f"(dist {dist}); uninstall one of them")
                self.failures.append(error)
                self._duplicates[desc.name] = error
            else:
                found[desc.name] = desc
                owner[desc.name] = plugin
        self._backends = found
        if self._installed and not self.failures and not self._duplicates:
            entry_cache.store_backends(ENTRY_POINT_GROUP, owner)
        return found

    def duplicate(self, name: str) -> PluginError | None:
        """Return the error recorded when backend ``name`` was provided twice, else None."""
        self.backends()
        return self._duplicates.get(name)

    @staticmethod
    def _check_descriptor(desc: Any) -> str:
        if not isinstance(desc, BackendDescriptor):
            return (f"hook accy_backends must return BackendDescriptor values, "
                    f"got {type(desc).__name__}")
        if desc.api_version != API_VERSION:
            return (f"backend '{desc.name}' implements backend API version "
                    f"{desc.api_version}, but accy-core implements {API_VERSION}; "
                    f"install matching versions")
        return ""
