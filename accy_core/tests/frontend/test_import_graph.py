"""The frontend's modules import one another in one direction (tracer core → op groups →
methods → the ``accy.numpy`` namespace): no cycle, counting imports inside functions."""

from __future__ import annotations

import ast
from pathlib import Path

import accy.frontend

PKG = Path(accy.frontend.__file__).parent
NAMESPACE = PKG.parent / "numpy.py"


def _module(path: Path) -> str:
    return "accy.numpy" if path == NAMESPACE else f"accy.frontend.{path.stem}"


def _runtime_nodes(tree: ast.AST):
    """Every node except those under ``if TYPE_CHECKING:`` (not imported at run time)."""
    todo = [tree]
    while todo:
        node = todo.pop()
        yield node
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and ast.unparse(child.test).endswith("TYPE_CHECKING"):
                todo.extend(child.orelse)
                continue
            todo.append(child)


def _imports(path: Path, known: set[str]) -> set[str]:
    out = set()
    for node in _runtime_nodes(ast.parse(path.read_text())):
        names = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
        out |= {n for n in names if n in known}
    return out - {_module(path)}


def _graph() -> dict[str, set[str]]:
    files = [p for p in PKG.glob("*.py") if p.name != "__init__.py"] + [NAMESPACE]
    known = {_module(p) for p in files}
    return {_module(p): _imports(p, known) for p in files}


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(n: str) -> list[str] | None:
        state[n] = 1
        stack.append(n)
        for m in sorted(graph[n]):
            if state.get(m) == 1:
                return stack[stack.index(m):] + [m]
            if m not in state and (found := visit(m)):
                return found
        stack.pop()
        state[n] = 2
        return None

    for n in sorted(graph):
        if n not in state and (found := visit(n)):
            return found
    return None


def test_frontend_imports_have_no_cycle() -> None:
    graph = _graph()
    assert "accy.frontend.tracer" in graph and "accy.numpy" in graph
    cycle = _cycle(graph)
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])


def test_tracer_core_imports_no_op_group() -> None:
    assert _graph()["accy.frontend.tracer"] <= {"accy.frontend.errors", "accy.frontend.trace"}


def test_cycle_finder_can_fail() -> None:
    assert _cycle({"a": {"b"}, "b": {"a"}}) == ["a", "b", "a"]
