"""Run profiling cases: compile and execute a workload per sample, emitting records.

One sample of a case times the phases ``semantic`` (build the workload program and verify
it), the six stages (their pass wall time), ``codegen`` (backend compile and load of every
kernel, through accy's artifact caches), ``execute`` (one call of the executable, inputs to
outputs) and ``total`` (all of them). The whole sample runs under ``tracemalloc``; its memory
record holds the traced peak and final bytes and the change in the interpreter's allocated
blocks (``sys.getallocatedblocks``). Warmup samples emit nothing.
"""

from __future__ import annotations

import sys
import time
import tracemalloc
from collections import defaultdict
from typing import Any

import numpy as np

from accy.ir.ops.dispatch import FAMILY_KINDS, VIEW_KIND
from accy.profiling.records import PHASES, RecordWriter
from accy.profiling.summary import summarize
from accy.progress import track

__all__ = ["emit_sweep_result", "run_case", "run_profile", "sweep_case"]


def _sample(backend: Any, name: str, elements: int, chain: int) -> dict[str, Any]:
    from accy.passes import PassContext, run_stages
    from accy.profiling.workloads import build
    from accy.runtime.compiler import compile_kernel, load_all
    from accy.runtime.executable import Executable
    from accy.runtime.graph import graph_from_function
    from accy.tuning.cache import launch_resolver

    ns: dict[str, int] = {}
    blocks = sys.getallocatedblocks()
    tracemalloc.start()
    try:
        t0 = time.perf_counter_ns()
        wl = build(name, elements, chain)
        wl.module.verify()
        t1 = time.perf_counter_ns()
        caps = backend.capabilities()
        ctx = PassContext(target_profile=backend.target_profile(), backend=backend.name)
        ctx.options["launch_choices"] = launch_resolver(caps.device_fingerprint)
        products = run_stages(wl.module, ctx)
        t2 = time.perf_counter_ns()
        final = products[-1].module
        graph = graph_from_function(final, final.functions[0])
        stats: dict[str, int] = {}
        loaded = load_all(backend, {k: compile_kernel(backend, kern, stats)
                                    for k, kern in graph.kernels.items()})
        exe = Executable(backend, graph, loaded, final, products, stats, owns_kernels=True)
        t3 = time.perf_counter_ns()
        outputs = exe(*wl.inputs)
        t4 = time.perf_counter_ns()
        exe.close()
        current, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    ns.update(semantic=t1 - t0, codegen=t3 - t2, execute=t4 - t3)
    for p in products:
        ns[p.stage] = p.wall_ns
    ns["total"] = sum(ns[k] for k in PHASES if k != "total")
    return {"ns": ns, "products": products, "final": final, "workload": wl, "outputs": outputs,
            "memory": (peak, current, sys.getallocatedblocks() - blocks), "cache": stats}


def _choices(final: Any) -> dict[str, dict[str, str]]:
    out = {}
    for fn in final.functions:
        for op in fn.body.ops:
            if op.name == "dispatch.region" and op.attrs.get("kind") not in FAMILY_KINDS \
                    and op.attrs.get("kind") != VIEW_KIND:
                first = str(op.attrs.get("candidates", "")).split(",")[0]
                out[op.attrs["kernel"]] = {
                    "candidate": op.attrs.get("candidate") or first,
                    "source": op.attrs.get("candidate_source") or "default"}
    return out


def _emit_sample(w: RecordWriter, k: int, s: dict[str, Any], series: dict) -> None:
    for phase in PHASES:
        w.emit("phase", sample=k, phase=phase, ns=s["ns"][phase])
        series["phase", phase].append(s["ns"][phase])
    peak, current, blocks = s["memory"]
    w.emit("memory", sample=k, peak_bytes=peak, current_bytes=current, allocations=blocks)
    series["memory", "peak"].append(peak)
    for p in s["products"]:
        for r in p.records:
            w.emit("pass", sample=k, stage=p.stage, **{"pass": r.name}, runs=r.runs,
                   ns=r.wall_ns, ops_before=r.ops_before, ops_after=r.ops_after)
            series["pass", f"{p.stage}/{r.name}"].append(r.wall_ns)
        for a in p.analysis_records:
            w.emit("analysis", sample=k, stage=p.stage, analysis=a.name, hits=a.hits,
                   misses=a.misses)
            series["analysis", f"{p.stage}/{a.name}/hits"].append(a.hits)


def _check(w: RecordWriter, s: dict[str, Any]) -> bool:
    wl = s["workload"]
    want = wl.reference(wl.inputs)
    err = max(float(np.max(np.abs(np.asarray(g, np.float64) - np.asarray(r, np.float64))))
              if np.size(r) else 0.0 for g, r in zip(s["outputs"], want, strict=True))
    scale = max(1.0, max(float(np.max(np.abs(r))) for r in want if np.size(r)))
    ok = bool(np.isfinite(err) and err <= 1e-3 * scale)
    w.emit("check", ok=ok, max_abs_error=err)
    return ok


def run_case(w: RecordWriter, backend: Any, name: str, elements: int, chain: int,
             samples: int = 3, warmup: int = 1) -> bool:
    """Profile one case: warmup, samples (phase/memory/pass/analysis records), summaries.

    Returns whether the workload's result matched its numpy reference.
    """
    w.for_case(name, elements, chain)
    for _ in range(warmup):
        _sample(backend, name, elements, chain)
    series: dict[tuple[str, str], list[float]] = defaultdict(list)
    ok = True
    for k in range(samples):
        s = _sample(backend, name, elements, chain)
        if k == 0:
            w.emit("compile", kernels=len(s["final"].attrs.get("kernels", {})),
                   launch_choices=_choices(s["final"]), cache=s["cache"])
            ok = _check(w, s)
        _emit_sample(w, k, s, series)
    units = {"phase": "ns", "pass": "ns", "analysis": "count", "memory": "bytes"}
    for (metric, metric_name), values in series.items():
        w.emit("summary", metric=metric, name=metric_name, unit=units[metric], **summarize(values))
    return ok


def sweep_case(w: RecordWriter, backend_name: str, name: str, elements: int, chain: int,
               samples: int, warmup: int) -> None:
    """Sweep the case's launch candidates (candidate and best records; writes the cache)."""
    from accy.profiling.workloads import build
    from accy.tuning.sweep import sweep_program

    w.for_case(name, elements, chain)
    for r in sweep_program(build(name, elements, chain).module, backend_name, warmup=warmup,
                           samples=samples):
        emit_sweep_result(w, r)


def emit_sweep_result(w: RecordWriter, r: Any) -> None:
    """Candidate records and one best record of a :class:`accy.tuning.sweep.SweepResult`."""
    for m in r.measurements:
        w.emit("candidate", kernel=r.kernel, key=r.key, shape_family=r.shape_family,
               index=m.index, label=m.label, median_ns=m.median_ns, times_ns=list(m.times_ns))
    if r.best is not None:
        w.emit("best", kernel=r.kernel, label=r.best.label, median_ns=r.best.median_ns,
               cached=r.cached)
    else:
        w.emit("best", kernel=r.kernel, label="", median_ns=0, cached=False, skipped=r.skipped)


def run_profile(cases: list[tuple[str, int, int]], backend: str = "cpu", stream: Any = None, *,
                samples: int = 3, warmup: int = 1, sweep: bool = False, suite: str | None = None,
                progress: bool = False) -> RecordWriter:
    """Profile ``cases`` on ``backend``: start record, each case, optional sweeps, end record.

    A case that raises an :class:`~accy.errors.AccyError` gets an ``error`` record and the run
    goes on; the end record's ``ok`` is False then (or when a result mismatched numpy).

    Raises:
        BackendUnavailable: the backend cannot run here.
        InputError: ``samples < 1`` or ``warmup < 0``.
    """
    import accy
    from accy.errors import AccyError, InputError
    from accy.plugins import open_backend

    if samples < 1 or warmup < 0:
        raise InputError(f"profile: need samples >= 1 and warmup >= 0, got samples={samples}, "
                         f"warmup={warmup}")
    be = open_backend(backend)
    w = RecordWriter(stream, backend, be.capabilities().device_fingerprint)
    start = time.perf_counter_ns()
    w.emit("start", suite=suite, samples=samples, warmup=warmup, sweep=sweep,
           accy_version=accy.__version__, time_s=time.time(), cases=[list(c) for c in cases])
    ok = True
    for name, elements, chain in track(cases, "profile", "case", show=progress):
        try:
            ok &= run_case(w, be, name, elements, chain, samples, warmup)
            if sweep:
                sweep_case(w, backend, name, elements, chain, samples, warmup)
        except AccyError as e:
            w.emit("error", message=f"{type(e).__name__}: {e}")
            ok = False
    if sweep:
        from accy.tuning.family_sweep import emit_family_records, sweep_families

        w.for_case(None, None, None)
        emit_family_records(w, sweep_families(backend, warmup=warmup, samples=samples))
    w.for_case(None, None, None)
    w.emit("end", wall_ns=time.perf_counter_ns() - start, records=len(w.records) + 1, ok=ok)
    return w
