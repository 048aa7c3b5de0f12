"""Run a sequence of passes over a module, with records, verification and error wrapping."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence

from accy.errors import AccyError, PassError, VerifyError
from accy.ir import Module
from accy.passes.base import Pass, PassContext, PassRecord

__all__ = ["PassManager", "merge_records"]

Callback = Callable[[Pass, Module, PassRecord], None]


class PassManager:
    """Run ``passes`` in order over a module.

    Args:
        passes: pass instances, or pipeline text (parsed with
            :func:`accy.passes.parse_pipeline`).
        verify_each: verify the module after every pass.
        label: a name for messages (a stage name such as ``"contract"``).
        callback: called as ``callback(pass, module, record)`` after each pass.
    """

    def __init__(
        self,
        passes: Sequence[Pass] | str,
        verify_each: bool = False,
        label: str = "",
        callback: Callback | None = None,
    ) -> None:
        if isinstance(passes, str):
            from accy.passes.pipeline import parse_pipeline

            passes = parse_pipeline(passes)
        self.passes: tuple[Pass, ...] = tuple(passes)
        self.verify_each = verify_each
        self.label = label
        self.callback = callback

    @property
    def text(self) -> str:
        """The pipeline text of this manager's passes."""
        from accy.passes.pipeline import print_pipeline

        return print_pipeline(self.passes)

    def _where(self, p: Pass, i: int) -> str:
        stage = f" in stage '{self.label}'" if self.label else ""
        return f"pass '{p.name}' (position {i}{stage})"

    def run(self, module: Module, ctx: PassContext | None = None) -> list[PassRecord]:
        """Run every pass over ``module`` in place; return one record per pass.

        Records are also appended to ``ctx.records``. After a pass that changed the module
        (or returned ``None``), cached analyses of the module are invalidated except those
        the pass ``preserves``.

        Raises:
            PassError: a pass raised an exception that is not an accy error, or (with
                ``verify_each``) left invalid IR; names the pass and its 0-based position.
            AccyError: any accy error a pass raised passes through unchanged.
        """
        ctx = ctx if ctx is not None else PassContext()
        records: list[PassRecord] = []
        count = module.op_count() if self.passes else 0  # carried over unchanged passes
        for i, p in enumerate(self.passes):
            before = count
            start = time.perf_counter_ns()
            try:
                changed = p.run(module, ctx)
            except AccyError:
                raise
            except Exception as e:
                raise PassError(
                    f"{self._where(p, i)} failed: {type(e).__name__}: {e}",
                    pass_name=p.name,
                    position=i,
                ) from e
            wall = time.perf_counter_ns() - start
            changed = True if changed is None else bool(changed)
            if changed:
                ctx.analyses.invalidate(module, type(p).preserves)
                count = module.op_count()
            record = PassRecord(p.name, 1, wall, before, count, i, changed)
            records.append(record)
            ctx.records.append(record)
            if self.verify_each:
                self._verify(module, p, i)
            if self.callback is not None:
                self.callback(p, module, record)
        return records

    def _verify(self, module: Module, p: Pass, i: int) -> None:
        try:
            module.verify()
        except VerifyError as e:
            raise PassError(
                f"{self._where(p, i)} left invalid IR: {e.message}", pass_name=p.name, position=i
            ) from e


def merge_records(records: Iterable[PassRecord]) -> list[PassRecord]:
    """Merge records by pass name (first-seen order): runs and wall time add up, ops before
    come from the first run and ops after from the last."""
    merged: dict[str, PassRecord] = {}
    for r in records:
        m = merged.get(r.name)
        if m is None:
            merged[r.name] = PassRecord(
                r.name, r.runs, r.wall_ns, r.ops_before, r.ops_after, -1, r.changed
            )
        else:
            merged[r.name] = PassRecord(
                r.name,
                m.runs + r.runs,
                m.wall_ns + r.wall_ns,
                m.ops_before,
                r.ops_after,
                -1,
                m.changed or r.changed,
            )
    return list(merged.values())
