"""Family sweeps: time every variant and candidate of the kernel-library families on the
problems each family provides, reject wrong or faulting candidates, cache the winners.

A family provides its problems as ``metadata["tuning_problems"]`` (``"module:function"``
called as ``fn(family_name, backend, sizes=..., defaults=...)`` returning
:class:`FamilyProblem` objects: run arguments, tuning key, the variant an untuned call runs
and a check against the family's reference). The older ``metadata["tuning_problem"]``
(keyword arguments of one problem) still works: its results are checked against the
default candidate's, its key is ``metadata["tuning_shape_family"]``.

For each problem, each variant that runs on the backend and each candidate (the variant's
default first):

1. the candidate runs once under :func:`accy.families.runner.capture_plans`; an exception
   (``refused:`` a CapabilityError/UnsupportedError, the variant refusing the problem;
   ``fault:`` anything else) or a result the problem's check refuses *rejects* it: it is
   recorded with the reason and never chosen;
2. the captured launch graphs of the accepted candidates are bound once to device buffers
   (inputs uploaded once, :class:`accy.families.replay.PreparedReplay`), then only their
   launches are timed by the measuring rule (:func:`accy.tuning.measure.measure_interleaved`:
   warm-up, samples taken round-robin over the variant's candidates, each ended by the
   backend's synchronize — the pool barrier on CPU, the queue wait on GPU backends — upper
   median), with the outputs re-zeroed untimed before each launch.

The margin rule: a variant's best candidate replaces its default candidate only when the
default is slower by at least ``margin`` (fraction, default 3 %); the best variant (each
at the candidate a tuned call would use) replaces the untuned call's variant under the same
rule. Winners go to the tuning cache as ``kind="family"`` entries under the key of
:mod:`accy.tuning.families` through :func:`~accy.tuning.families.store_family_entries`
(an entry is replaced only by a faster one, or when stale).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from accy.tuning.cache import TuningCache, TuningEntry
from accy.tuning.measure import DEFAULT_MARGIN, Measurement

__all__ = ["CandidateResult", "FamilyProblem", "FamilyResult", "emit_family_records",
           "sweep_families", "workload_sizes"]


@dataclass
class FamilyProblem:
    """One problem a family is swept on.

    Attributes:
        family: the family name.
        kwargs: keyword arguments of the variants' ``run(backend, candidate, **kwargs)``.
        dtypes, shape_class: the tuning key of the problem (the family's call key).
        check: ``check(result) -> None`` when ``result`` matches the reference, else the
            reason (a string).
        default_variant: the variant an untuned call runs (None: the family's first).
        variants: the variants to sweep (None: all).
        run: ``run(backend, variant, candidate)`` instead of the variant's own ``run``.
        label: a short description (``f32 n=1048576``); source: ``default`` or
            ``workload``.
    """

    family: str
    kwargs: dict[str, Any]
    dtypes: str
    shape_class: str
    check: Callable[[Any], str | None]
    default_variant: str | None = None
    variants: tuple[str, ...] | None = None
    run: Callable[[Any, Any, Any], Any] | None = None
    label: str = ""
    source: str = "default"


@dataclass
class CandidateResult:
    """One candidate of one variant on one problem: its measurement, or why rejected."""

    variant: str
    label: str
    index: int
    measurement: Measurement | None = None
    rejected: str = ""
    artifact: str = ""

    @property
    def median_ns(self) -> int:
        """Upper-median time (ns); 0 when rejected."""
        return self.measurement.median_ns if self.measurement is not None else 0


@dataclass
class FamilyResult:
    """What the sweep of one problem found.

    Attributes:
        problem: the problem.
        candidates: every candidate tried, measured or rejected.
        default: what an untuned call runs; winner: what a tuned call runs after the
            margin rule (the default when nothing wins by the margin).
        entries: the tuning-cache entries this problem produced (written or not).
        skipped: why nothing ran (no variant runs here).
    """

    problem: FamilyProblem
    candidates: list[CandidateResult] = field(default_factory=list)
    default: CandidateResult | None = None
    winner: CandidateResult | None = None
    entries: list[TuningEntry] = field(default_factory=list)
    skipped: str = ""

    @property
    def speedup(self) -> float:
        """Default time / winner time (1.0 when either is missing)."""
        if not self.default or not self.winner or not self.winner.median_ns:
            return 1.0
        return self.default.median_ns / self.winner.median_ns

    @property
    def rejected(self) -> list[CandidateResult]:
        """The rejected candidates."""
        return [c for c in self.candidates if c.rejected]


def _default_candidate(var: Any, be: Any, kwargs: dict[str, Any]) -> Any:
    from accy.families import resolve

    if var.default:
        try:
            cand = resolve(var.default)(be, **kwargs)
        except Exception:  # noqa: BLE001  (a heuristic that refuses: use the first)
            cand = None
        if cand in var.candidates:
            return cand
    return var.candidates[0]


def _check(be: Any, var: Any, cand: Any, problem: FamilyProblem,
           index: int) -> tuple[CandidateResult, list[Any]]:
    """Run ``cand`` once under plan capture and check its result: ``(result, runs)``; the
    result carries the reason when rejected."""
    from accy.errors import CapabilityError, UnsupportedError
    from accy.families import resolve
    from accy.families.replay import artifact_fingerprint
    from accy.families.runner import capture_plans

    res = CandidateResult(var.name, cand.label(), index)
    try:
        with capture_plans() as runs:
            if problem.run is not None:
                out = problem.run(be, var, cand)
            else:
                out = resolve(var.run)(be, cand, **problem.kwargs)
    except (CapabilityError, UnsupportedError) as e:  # the variant refuses this problem
        res.rejected = f"refused: {type(e).__name__}: {e}"
        return res, []
    except Exception as e:  # noqa: BLE001  (any other failure is a fault)
        res.rejected = f"fault: {type(e).__name__}: {e}"
        return res, []
    try:
        reason = problem.check(out)
    except Exception as e:  # noqa: BLE001
        reason = f"check failed: {type(e).__name__}: {e}"
    if reason:
        res.rejected = reason
        return res, []
    res.artifact = artifact_fingerprint(be, runs)
    return res, runs


def _time_variant(checked: list[tuple[CandidateResult, list[Any]]], warmup: int,
                  samples: int, clock: Callable[[], int] | None) -> None:
    """Time the accepted candidates of one variant, interleaved (fills ``measurement``)."""
    from accy.families.replay import PreparedReplay
    from accy.tuning.measure import Timed, measure_interleaved

    replays: list[tuple[CandidateResult, PreparedReplay]] = []
    try:
        for res, runs in checked:
            if res.rejected:
                continue
            try:
                replays.append((res, PreparedReplay(runs)))
            except Exception as e:  # noqa: BLE001
                res.rejected = f"fault while preparing: {type(e).__name__}: {e}"
        items = [Timed(res.index, res.label, rp.launch, rp.synchronize, rp.reset)
                 for res, rp in replays]
        extra = {"clock": clock} if clock is not None else {}
        try:
            found = measure_interleaved(items, warmup=warmup, samples=samples, **extra)
        except Exception:  # noqa: BLE001  (a faulting launch: time them one by one)
            found = []
            for (res, _), item in zip(replays, items, strict=True):
                try:
                    found += measure_interleaved([item], warmup=warmup, samples=samples,
                                                 **extra)
                except Exception as e1:  # noqa: BLE001
                    res.rejected = f"fault while timing: {type(e1).__name__}: {e1}"
                    found.append(None)
        for (res, _), m in zip(replays, found, strict=True):
            if m is not None and not res.rejected:
                res.measurement = m
    finally:
        for _, rp in replays:
            rp.close()


def _beats(win: CandidateResult, default: CandidateResult | None, margin: float) -> bool:
    """The margin rule: ``win`` replaces ``default`` (a rejected default always loses)."""
    if win is default or win.measurement is None:
        return False
    if default is None or default.measurement is None:
        return True
    return default.median_ns >= win.median_ns * (1.0 + margin)


def _entry(device: str, kernel: str, shape: str, choice: str, win: CandidateResult,
           default: CandidateResult | None, runner_up: int) -> TuningEntry:
    import accy

    return TuningEntry(device, kernel, shape, choice, win.median_ns, runner_up,
                       win.measurement.samples if win.measurement else 0, "family",
                       accy.__version__, win.artifact, default.median_ns if default else 0)


def sweep_problem(fam: Any, problem: FamilyProblem, be: Any, *, warmup: int = 1,
                  samples: int = 3, margin: float = DEFAULT_MARGIN,
                  clock: Callable[[], int] | None = None) -> FamilyResult:
    """Sweep one problem of ``fam`` on the live backend ``be`` (see the module docstring)."""
    from accy.families import variant_runs_on
    from accy.tuning.families import family_shape_key, space_version

    device = be.capabilities().device_fingerprint
    shape = family_shape_key(space_version(fam), problem.dtypes, problem.shape_class)
    r = FamilyResult(problem)
    effective: dict[str, CandidateResult] = {}
    for var in fam.variants:
        if problem.variants is not None and var.name not in problem.variants:
            continue
        if not variant_runs_on(var, be)[0]:
            continue
        default = _default_candidate(var, be, problem.kwargs)
        cands = [default] + [c for c in var.candidates if c != default]
        checked = [_check(be, var, c, problem, i) for i, c in enumerate(cands)]
        _time_variant(checked, warmup, samples, clock)
        tried = [res for res, _ in checked]
        r.candidates += tried
        ok = [t for t in tried if t.measurement is not None]
        if not ok:
            continue
        best = min(ok, key=lambda t: (t.median_ns, t.index))
        if _beats(best, tried[0], margin):
            others = [t.median_ns for t in ok if t is not best]
            r.entries.append(_entry(device, f"{fam.name}.{var.name}", shape, best.label, best,
                                    tried[0], min(others, default=0)))
            effective[var.name] = best
        elif tried[0].measurement is not None:
            effective[var.name] = tried[0]
    if not effective:
        r.skipped = "no candidate ran correctly" if r.candidates else "no variant runs here"
        return r
    default_name = problem.default_variant or fam.variants[0].name
    r.default = next((c for c in r.candidates if c.variant == default_name and c.index == 0),
                     None)
    base = effective.get(default_name)
    win = min(effective.values(), key=lambda t: (t.median_ns, t.variant != default_name))
    if win.variant != default_name and _beats(win, base, margin):
        others = [t.median_ns for t in effective.values() if t is not win]
        r.entries.append(_entry(device, fam.name, shape, win.variant, win, r.default,
                                min(others, default=0)))
        r.winner = win
    else:
        r.winner = base if base is not None else r.default
    return r


def _legacy_problems(fam: Any, be: Any) -> list[FamilyProblem]:
    """``metadata["tuning_problem"]``: one problem checked against the default's result."""
    from accy.families import resolve

    meta = dict(fam.metadata or {})
    kwargs = dict(resolve(meta["tuning_problem"])())
    shape = str(meta.get("tuning_shape_family", "default"))
    holder: dict[str, Any] = {}

    def check(out: Any) -> str | None:
        import numpy as np

        if "ref" not in holder:  # the first candidate tried is the default variant's default
            holder["ref"] = out
            return None
        ref = holder["ref"]
        a = ref if isinstance(ref, tuple) else (ref,)
        b = out if isinstance(out, tuple) else (out,)
        same = len(a) == len(b) and all(
            np.asarray(x).shape == np.asarray(y).shape
            and np.allclose(np.asarray(x), np.asarray(y), rtol=1e-3, atol=1e-3, equal_nan=True)
            for x, y in zip(a, b, strict=True))
        return None if same else "result differs from the default candidate's"

    return [FamilyProblem(fam.name, kwargs, str(kwargs.get("dtype", "any")), shape, check,
                          label=shape)]


def family_problems(fam: Any, be: Any, sizes: Iterable[int] = (),
                    defaults: bool = True) -> list[FamilyProblem]:
    """The problems ``fam`` provides (see the module docstring); [] if none."""
    from accy.families import resolve

    meta = dict(fam.metadata or {})
    if "tuning_problems" in meta:
        return list(resolve(meta["tuning_problems"])(fam.name, be, sizes=tuple(sizes),
                                                     defaults=defaults))
    if "tuning_problem" in meta and defaults:
        return _legacy_problems(fam, be)
    return []


def sweep_families(backend: str | Any = "cpu", *, warmup: int = 1, samples: int = 3,
                   margin: float = DEFAULT_MARGIN, cache: TuningCache | None = None,
                   write: bool = True, progress: bool = False,
                   names: Iterable[str] | None = None,
                   sizes: Mapping[str, Iterable[int]] | None = None, defaults: bool = True,
                   clock: Callable[[], int] | None = None) -> list[FamilyResult]:
    """Sweep the registered families (all, or ``names``) on ``backend``; cache the winners.

    Args:
        backend: a backend name or live backend.
        warmup, samples: the measuring rule's counts (per candidate).
        margin: the margin rule's fraction.
        cache: the tuning cache (default: ``ACCY_TUNING_CACHE``); write: store winners.
        names: families to sweep (default: all registered).
        sizes: family → extra problem sizes (e.g. :func:`workload_sizes`).
        defaults: include each family's fixed default problems.

    Returns:
        one :class:`FamilyResult` per problem ([] without a kernel-library package).

    Raises:
        BackendUnavailable: the backend cannot run here.
        InputError: an unknown family in ``names``.
    """
    try:
        from accy.families import families, get_family
    except ImportError:
        return []
    from accy.families import backend_object
    from accy.progress import track
    from accy.tuning.families import store_family_entries

    be = backend_object(backend)
    fams = ([get_family(n) for n in names] if names is not None
            else sorted(families().values(), key=lambda f: f.name))
    work = [(f, p) for f in fams
            for p in family_problems(f, be, (sizes or {}).get(f.name, ()), defaults)]
    results = [sweep_problem(f, p, be, warmup=warmup, samples=samples, margin=margin,
                             clock=clock)
               for f, p in track(work, "families", "problem", show=progress, transient=True)]
    if write:
        entries = [e for r in results for e in r.entries]
        if entries:
            store_family_entries(entries, cache)
    return results


def workload_sizes(module: Any) -> dict[str, list[int]]:
    """Family → problem sizes of the ``library.*`` calls in a tensor IR ``module`` (elements
    of the first operand; SpMV/SpMM: rows; matmul: the largest extent)."""
    from accy.ir.ops.library import FAMILY_OF

    out: dict[str, list[int]] = {}
    for fn in module.functions:
        for op in _walk(fn.body.ops):
            prefix, _, short = op.name.partition(".")
            if prefix != "library" or short not in FAMILY_OF or not op.operands:
                continue
            t = op.operands[0].type
            size = max(t.shape) if FAMILY_OF[short] == "matmul" and t.shape else t.num_elements
            sizes = out.setdefault(FAMILY_OF[short], [])
            if size not in sizes:
                sizes.append(size)
    return out


def _walk(ops: Iterable[Any]) -> Iterable[Any]:
    for op in ops:
        yield op
        for region in getattr(op, "regions", ()):
            yield from _walk(region.block.ops)


def emit_family_records(writer: Any, results: Iterable[FamilyResult]) -> None:
    """Write JSON-lines records through ``writer.emit(event, **fields)`` (an
    :class:`accy.profiling.records.RecordWriter`): one ``candidate`` per measured candidate,
    one ``rejected`` per rejected one, one ``best`` per problem (winner vs default), each
    with the family, variant, tuning key and artifact fingerprint."""
    import accy

    for r in results:
        p = r.problem
        common = {"kind": "family", "family": p.family, "dtypes": p.dtypes,
                  "shape_family": p.shape_class, "problem": p.label, "source": p.source,
                  "accy_version": accy.__version__}
        for c in r.candidates:
            kernel = f"{p.family}.{c.variant}"
            if c.measurement is None:
                writer.emit("rejected", kernel=kernel, label=c.label, index=c.index,
                            reason=c.rejected, **common)
                continue
            writer.emit("candidate", kernel=kernel, key=kernel, index=c.index, label=c.label,
                        median_ns=c.median_ns, times_ns=list(c.measurement.times_ns),
                        artifact=c.artifact, **common)
        if r.winner is None:
            writer.emit("best", kernel=p.family, label="", median_ns=0, cached=False,
                        skipped=r.skipped, **common)
            continue
        d = r.default
        writer.emit("best", kernel=f"{p.family}.{r.winner.variant}", label=r.winner.label,
                    median_ns=r.winner.median_ns, cached=bool(r.entries),
                    artifact=r.winner.artifact,
                    default_kernel=f"{p.family}.{d.variant}" if d else "",
                    default_label=d.label if d else "", default_ns=d.median_ns if d else 0,
                    speedup=round(r.speedup, 4), **common)


def format_table(results: Iterable[FamilyResult]) -> str:
    """The ``accy tune --families`` table: per problem the default, the winner, their
    times (us) and the speed-up (default / winner), and how many candidates were
    rejected."""
    rows = [("family", "problem", "default", "us", "winner", "us", "speed-up", "rejected")]
    for r in results:
        p = r.problem
        if r.winner is None:
            rows.append((p.family, p.label, f"skipped: {r.skipped}", "", "", "", "",
                         str(len(r.rejected))))
            continue
        d = r.default
        rows.append((p.family, p.label, f"{d.variant}/{d.label}" if d else "-",
                     f"{d.median_ns / 1e3:.1f}" if d and d.median_ns else "-",
                     f"{r.winner.variant}/{r.winner.label}", f"{r.winner.median_ns / 1e3:.1f}",
                     f"{r.speedup:.2f}x", str(len(r.rejected))))
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip()
                     for row in rows)
