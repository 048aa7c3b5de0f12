"""Runtime: compile a module for a backend, load its kernels, bind numpy inputs, run.

The names below load their submodule on first use (PEP 562), so importing one submodule
(the artifact cache, on a warm-cache first call) does not import the others.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from accy.runtime.compiler import (
        artifact_key,
        clear_memory_cache,
        compile,
        compile_kernel,
        load_all,
    )
    from accy.runtime.deps import DependencyGraph, Edge, dependency_graph
    from accy.runtime.executable import Executable
    from accy.runtime.graph import GraphLaunch, LaunchGraph, graph_from_function
    from accy.runtime.invocation import Invocation, Submission
    from accy.runtime.streams import StreamPlan, plan_streams

_WHERE = {
    "artifact_key": "compiler", "clear_memory_cache": "compiler", "compile": "compiler",
    "compile_kernel": "compiler", "load_all": "compiler",
    "DependencyGraph": "deps", "Edge": "deps", "dependency_graph": "deps",
    "Executable": "executable",
    "GraphLaunch": "graph", "LaunchGraph": "graph", "graph_from_function": "graph",
    "Invocation": "invocation", "Submission": "invocation",
    "StreamPlan": "streams", "plan_streams": "streams",
}

__all__ = [
    "DependencyGraph", "Edge", "Executable", "GraphLaunch", "Invocation", "LaunchGraph",
    "StreamPlan", "Submission", "artifact_key", "clear_memory_cache", "compile",
    "compile_kernel", "dependency_graph", "graph_from_function", "load_all", "plan_streams",
]


def __getattr__(name: str) -> Any:
    """Load the submodule that defines ``name`` (see ``_WHERE``)."""
    where = _WHERE.get(name)
    if where is None:
        raise AttributeError(f"module 'accy.runtime' has no attribute {name!r}")
    value = getattr(import_module(f"accy.runtime.{where}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_WHERE))
