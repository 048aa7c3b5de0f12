"""Hook specifications: the contract between accy and its plugins.

A plugin is a module listed under the ``accy`` entry-point group (``[project.entry-points.accy]
myname = "mypkg.plugin"``) that defines functions decorated with ``accy.plugins.hookimpl``
and named like the hooks below. Every hook takes no arguments today and returns a list;
hooks are called with keyword arguments only, so arguments added in later versions break no
plugin (an implementation may accept a subset of a hook's arguments).

Loading this module imports nothing but pluggy; types are imported only for type checkers.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pluggy

if TYPE_CHECKING:
    from accy.backend import BackendDescriptor

__all__ = [
    "accy_backends",
    "accy_kernel_families",
    "accy_passes",
    "accy_pipelines",
    "hookimpl",
    "hookspec",
]

hookspec = pluggy.HookspecMarker("accy")
hookimpl = pluggy.HookimplMarker("accy")


# -------------------------------------------------------------------------------- backends


@hookspec
def accy_backends() -> list[BackendDescriptor]:
    """Return the backends this plugin provides.

    Called once per process, when backends are first listed or opened; the results of all
    plugins are concatenated. A backend name provided by two plugins is an error naming
    both providers.

    :return: a list of :class:`accy.backend.BackendDescriptor`. Building a descriptor must
        not import heavy modules (``vulkan``, ``pycuda``, LLVM): do that inside its
        ``probe()`` and ``open()``.

    Added in API version 1.

    Use in plugins
    --------------

    Any installed plugin module (entry-point group ``accy``) may implement this hook.
    """


# -------------------------------------------------------------------------------- kernels


@hookspec
def accy_kernel_families() -> list[Any]:
    """Return the kernel-library families this plugin provides.

    Called once per process, when families are first listed or looked up; the results of
    all plugins are concatenated.

    :return: a list of family descriptors (named ``family.variant``, e.g. ``spmv.csr``) as
        defined by the kernel-library layer. Must not import heavy modules.

    Added in API version 1.

    Use in plugins
    --------------

    Any installed plugin module (entry-point group ``accy``) may implement this hook.
    """


# -------------------------------------------------------------------------------- passes


@hookspec
def accy_passes() -> list[Any]:
    """Return extra compiler passes this plugin provides.

    Called once per process, when the pass registry first needs plugin passes; the results
    of all plugins are concatenated. A pass name registered twice is an error naming both
    providers.

    :return: a list whose items are :class:`accy.passes.Pass` subclasses,
        ``(name, class or "module:Class")`` pairs or ``{name: class or "module:Class"}``
        dicts. Prefer the ``"module:Class"`` strings: they are imported only when the pass
        is used.

    Added in API version 1.

    Use in plugins
    --------------

    Any installed plugin module (entry-point group ``accy``) may implement this hook.
    """


@hookspec
def accy_pipelines() -> list[Any]:
    """Return extra named pipelines this plugin provides.

    Called once per process, when the pass registry first needs plugin pipelines; the
    results of all plugins are concatenated.

    :return: a list of ``(name, pipeline text)`` pairs or ``{name: pipeline text}`` dicts,
        the text in accy's pipeline syntax (``canonicalize,cse{...}``).

    Added in API version 1.

    Use in plugins
    --------------

    Any installed plugin module (entry-point group ``accy``) may implement this hook.
    """
