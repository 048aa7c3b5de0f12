"""Runtime: compile a module for a backend, load its kernels, bind numpy inputs, run."""

from accy.runtime.compiler import (
    artifact_key,
    clear_memory_cache,
    compile,
    compile_kernel,
)
from accy.runtime.executable import Executable
from accy.runtime.graph import GraphLaunch, LaunchGraph, graph_from_function

__all__ = [
    "Executable", "GraphLaunch", "LaunchGraph", "artifact_key", "clear_memory_cache", "compile",
    "compile_kernel", "graph_from_function",
]
