"""PassManager records, error wrapping, verify-each, and the analysis cache."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import pytest
from accy.errors import InputError, PassError
from accy.ir import Operation, parse_module
from accy.passes import (
    Analysis,
    Liveness,
    Pass,
    PassContext,
    PassManager,
    PassRecord,
    UseCounts,
    merge_records,
    parse_pipeline,
)

DEAD = """\
module {
  func @f(%arg0: f32[4]) -> (f32[4]) {
    %0 = math.exp %arg0 : (f32[4]) -> f32[4]
    %1 = arith.add %0, %arg0 : (f32[4], f32[4]) -> f32[4]
    %2 = arith.add %arg0, %arg0 : (f32[4], f32[4]) -> f32[4]
    func.return %2 : (f32[4]) -> ()
  }
}
"""


@dataclass(frozen=True)
class BreakTypesPass(Pass):
    """Changes a result type so the verifier rejects the module (test only)."""

    name: ClassVar[str] = "test-break-types"

    def run(self, module, ctx):
        op = module.functions[0].body.ops[0]
        op.results[0].type = op.results[0].type.with_shape((5,))
        return True


@dataclass(frozen=True)
class CrashPass(Pass):
    name: ClassVar[str] = "test-crash"

    def run(self, module, ctx):
        return {}["missing"]


@dataclass(frozen=True)
class InputErrorPass(Pass):
    name: ClassVar[str] = "test-input-error"

    def run(self, module, ctx):
        raise InputError("bad input")


class CountingAnalysis(Analysis):
    name: ClassVar[str] = "test-counting"
    computed = 0

    def compute(self, module):
        CountingAnalysis.computed += 1
        return module.op_count()


@dataclass(frozen=True)
class ReadAnalysesPass(Pass):
    """Reads two analyses; changes the module when ``change`` (test only)."""

    name: ClassVar[str] = "test-read-analyses"
    preserves: ClassVar[tuple[str, ...]] = ("use-counts",)
    change: bool = False

    def run(self, module, ctx):
        ctx.get_analysis(CountingAnalysis, module)
        ctx.get_analysis(UseCounts, module)
        return self.change


def test_records_name_runs_wall_and_op_counts() -> None:
    module = parse_module(DEAD)
    ctx = PassContext()
    records = PassManager(parse_pipeline("verify,dce,cse")).run(module, ctx)
    assert [
        (r.name, r.runs, r.position, r.ops_before, r.ops_after, r.changed) for r in records
    ] == [
        ("verify", 1, 0, 3, 3, False),
        ("dce", 1, 1, 3, 1, True),
        ("cse", 1, 2, 1, 1, False),
    ]
    assert all(r.wall_ns > 0 for r in records)
    assert ctx.records == records
    assert records[1].to_dict()["ops_after"] == 1


def test_manager_accepts_pipeline_text_and_prints_it() -> None:
    pm = PassManager("cse,einsum-lowering{beam-width=8}")
    assert pm.text == "cse,einsum-lowering{beam-width=8}"


def test_merge_records_adds_runs_by_name() -> None:
    records = [
        PassRecord("cse", 1, 10, 5, 4, 0, True),
        PassRecord("dce", 1, 7, 4, 3, 1, True),
        PassRecord("cse", 1, 5, 3, 3, 2, False),
    ]
    assert merge_records(records) == [
        PassRecord("cse", 2, 15, 5, 3, -1, True),
        PassRecord("dce", 1, 7, 4, 3, -1, True),
    ]


def test_verify_each_names_the_pass_that_broke_the_ir() -> None:
    module = parse_module(DEAD)
    pm = PassManager(
        [parse_pipeline("cse")[0], BreakTypesPass()], verify_each=True, label="contract"
    )
    with pytest.raises(PassError) as info:
        pm.run(module, PassContext())
    assert str(info.value) == (
        "pass 'test-break-types' (position 1 in stage 'contract') left invalid IR: "
        "'math.exp' op at @f:#0 (at line 3): result types ['f32[5]'] do not match inferred ['f32[4]']"
    )
    assert (info.value.pass_name, info.value.position) == ("test-break-types", 1)


def test_without_verify_each_broken_ir_is_not_noticed() -> None:
    PassManager([BreakTypesPass()]).run(parse_module(DEAD), PassContext())


def test_foreign_exception_becomes_pass_error_with_cause() -> None:
    with pytest.raises(PassError) as info:
        PassManager([parse_pipeline("dce")[0], CrashPass()]).run(parse_module(DEAD))
    assert str(info.value) == "pass 'test-crash' (position 1) failed: KeyError: 'missing'"
    assert isinstance(info.value.__cause__, KeyError)


def test_accy_errors_pass_through_unchanged() -> None:
    with pytest.raises(InputError, match="^bad input$"):
        PassManager([InputErrorPass()]).run(parse_module(DEAD))


def test_analysis_hits_misses_and_invalidation() -> None:
    module = parse_module(DEAD)
    ctx = PassContext()
    CountingAnalysis.computed = 0
    keep = ReadAnalysesPass(change=False)
    change = ReadAnalysesPass(change=True)
    PassManager([keep, keep, change, keep]).run(module, ctx)
    # keep: miss, miss | keep: hit, hit | change: hit, hit -> invalidates test-counting only
    # | keep: miss (recomputed), hit (use-counts preserved)
    stats = {r.name: (r.hits, r.misses) for r in ctx.analyses.records()}
    assert stats == {"test-counting": (2, 2), "use-counts": (3, 1)}
    assert CountingAnalysis.computed == 2


def test_a_pass_returning_none_counts_as_changed() -> None:
    @dataclass(frozen=True)
    class Silent(Pass):
        name: ClassVar[str] = "test-silent"

        def run(self, module, ctx):
            ctx.get_analysis(UseCounts, module)

    module, ctx = parse_module(DEAD), PassContext()
    records = PassManager([Silent(), Silent()]).run(module, ctx)
    assert all(r.changed for r in records)
    assert [(r.hits, r.misses) for r in ctx.analyses.records()] == [(0, 2)]


def test_analysis_cache_is_per_module() -> None:
    a, b = parse_module(DEAD), parse_module(DEAD)
    ctx = PassContext()
    assert ctx.get_analysis(UseCounts, a) is ctx.get_analysis(UseCounts, a)
    assert ctx.get_analysis(UseCounts, b) is not ctx.get_analysis(UseCounts, a)
    ctx.analyses.invalidate(a)
    assert not ctx.analyses.cached(UseCounts, a) and ctx.analyses.cached(UseCounts, b)


def test_use_counts_and_liveness() -> None:
    module = parse_module(DEAD)
    fn = module.functions[0]
    exp, add0, add1, ret = fn.body.ops
    counts = UseCounts().compute(module)
    assert counts[fn.params[0]] == 4  # exp, add0 once, add1 twice
    assert counts[exp.result] == 1 and counts[add0.result] == 0 and counts[add1.result] == 1
    last = Liveness().compute(module)["f"]
    assert last == {fn.params[0]: 2, exp.result: 1, add1.result: 3}
    assert isinstance(ret, Operation)
