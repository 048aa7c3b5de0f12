"""Runtime: compile a module for a backend, load its kernels, bind numpy inputs, run."""

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

__all__ = [
    "DependencyGraph", "Edge", "Executable", "GraphLaunch", "Invocation", "LaunchGraph",
    "StreamPlan", "Submission", "artifact_key", "clear_memory_cache", "compile",
    "compile_kernel", "dependency_graph", "graph_from_function", "load_all", "plan_streams",
]
