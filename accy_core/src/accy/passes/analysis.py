"""Analyses: facts computed from a module, cached until a pass changes it.

An :class:`Analysis` subclass has a ``name`` and a ``compute(module)``; passes ask for one
through :meth:`accy.passes.PassContext.get_analysis`. The :class:`AnalysisManager` caches
results per (analysis, module identity) and counts hits and misses; the pass manager
invalidates a module's results after a pass that changed it, except those the pass lists
in its ``preserves``.
"""

from __future__ import annotations

import typing
import weakref
from typing import Any, ClassVar

if typing.TYPE_CHECKING:
    from accy.ir import Module, Value
    from accy.passes.base import AnalysisRecord

__all__ = ["Analysis", "AnalysisManager", "Liveness", "UseCounts"]


class Analysis:
    """Base of analyses: a ``name`` and a pure ``compute(module)``."""

    name: ClassVar[str] = ""

    def compute(self, module: Module) -> Any:
        """Return the analysis result for ``module`` (must not change the module)."""
        raise NotImplementedError(f"analysis '{self.name}' does not implement compute()")


class AnalysisManager:
    """Cache of analysis results per (analysis class, module identity), with statistics."""

    def __init__(self) -> None:
        # id(module) -> (weak reference to the module, {analysis class: result})
        self._cache: dict[int, tuple[weakref.ref, dict[type, Any]]] = {}
        self._hits: dict[str, int] = {}
        self._misses: dict[str, int] = {}

    def get(self, analysis: type[Analysis], module: Module) -> Any:
        """Return ``analysis`` on ``module``, computing it on a miss."""
        entry = self._cache.get(id(module))
        if entry is None or entry[0]() is not module:
            entry = (weakref.ref(module), {})
            self._cache[id(module)] = entry
        results = entry[1]
        name = analysis.name or analysis.__name__
        if analysis in results:
            self._hits[name] = self._hits.get(name, 0) + 1
            return results[analysis]
        self._misses[name] = self._misses.get(name, 0) + 1
        result = analysis().compute(module)
        results[analysis] = result
        return result

    def invalidate(self, module: Module, preserve: tuple[str, ...] = ()) -> None:
        """Drop the cached results of ``module``, except analyses named in ``preserve``."""
        entry = self._cache.get(id(module))
        if entry is None:
            return
        kept = {a: r for a, r in entry[1].items() if a.name in preserve}
        if kept:
            self._cache[id(module)] = (entry[0], kept)
        else:
            del self._cache[id(module)]

    def clear(self) -> None:
        """Drop every cached result (statistics stay)."""
        self._cache.clear()

    def cached(self, analysis: type[Analysis], module: Module) -> bool:
        """Whether a result of ``analysis`` on ``module`` is cached."""
        entry = self._cache.get(id(module))
        return entry is not None and entry[0]() is module and analysis in entry[1]

    def records(self) -> list[AnalysisRecord]:
        """Hits and misses per analysis name, sorted by name."""
        from accy.passes.base import AnalysisRecord

        names = sorted(set(self._hits) | set(self._misses))
        return [AnalysisRecord(n, self._hits.get(n, 0), self._misses.get(n, 0)) for n in names]


class UseCounts(Analysis):
    """Value → number of uses, for every block argument and op result (nested included)."""

    name: ClassVar[str] = "use-counts"

    def compute(self, module: Module) -> dict[Value, int]:
        counts: dict[Value, int] = {}
        for fn in module.functions:
            for arg in fn.params:
                counts[arg] = len(arg.uses)
            for op in fn.walk():
                for r in op.regions:
                    for arg in r.block.args:
                        counts[arg] = len(arg.uses)
                for v in op.results:
                    counts[v] = len(v.uses)
        return counts


class Liveness(Analysis):
    """Per function name: value → index of its last use in the function's top-level ops.

    Values read by ``func.return`` have the return's index as last use; values never read
    are absent. Ops nested in regions do not count (``dispatch.region`` is isolated from
    above: its reads are its operands).
    """

    name: ClassVar[str] = "liveness"

    def compute(self, module: Module) -> dict[str, dict[Value, int]]:
        out: dict[str, dict[Value, int]] = {}
        for fn in module.functions:
            last: dict[Value, int] = {}
            for i, op in enumerate(fn.body.ops):
                for v in op.operands:
                    last[v] = i
            out[fn.name] = last
        return out
