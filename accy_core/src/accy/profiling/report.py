"""Summarize a JSON-lines profile: a text table and PNG plots (matplotlib, Agg backend).

Plots: ``phases.png`` (median time of each phase per case, one group of bars per case) and,
when some workload was run at several sizes (the ``scaling`` suite), ``scaling.png`` (median
total time against ``elements``, one line per workload, log-log axes).
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any

from accy.profiling.records import PHASES

__all__ = ["phase_medians", "render_table", "write_plots"]

_SHOWN = ("total", "contract", "tensor", "dispatch", "memory", "kernel", "target", "codegen",
          "execute")


def phase_medians(records: list[dict[str, Any]]) -> dict[tuple[str, int, int], dict[str, float]]:
    """(workload, elements, chain) → phase → median ns, from the summary records."""
    out: dict[tuple[str, int, int], dict[str, float]] = defaultdict(dict)
    for r in records:
        if r["event"] == "summary" and r["metric"] == "phase":
            out[r["workload"], r["elements"], r["chain"]][r["name"]] = r["median"]
    return dict(out)


def render_table(records: list[dict[str, Any]]) -> str:
    """A fixed-width table: one row per case, median milliseconds per phase."""
    medians = phase_medians(records)
    head = f"{'workload':<20} {'elements':>8} {'chain':>6} " + " ".join(
        f"{p[:8]:>8}" for p in _SHOWN)
    lines = [head, "-" * len(head)]
    for (name, elements, chain), phases in medians.items():
        cells = " ".join(f"{phases.get(p, 0) / 1e6:8.2f}" for p in _SHOWN)
        lines.append(f"{name:<20} {elements:>8} {chain:>6} {cells}")
    lines.append("(median milliseconds per phase)")
    errors = [r for r in records if r["event"] == "error"]
    lines += [f"error in {r['workload']}: {r['message']}" for r in errors]
    return "\n".join(lines)


def write_plots(records: list[dict[str, Any]], out_dir: str | Path) -> list[Path]:
    """Write ``phases.png`` (and ``scaling.png`` when sizes vary); return the paths."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    medians = phase_medians(records)
    written = []
    cases = list(medians)
    phases = [p for p in PHASES if p != "total"]
    fig, ax = plt.subplots(figsize=(max(6.0, 0.9 * len(cases) + 2), 4.5))
    width = 0.8 / len(phases)
    for i, phase in enumerate(phases):
        xs = [k + i * width for k in range(len(cases))]
        ax.bar(xs, [medians[c].get(phase, 0) / 1e6 for c in cases], width, label=phase)
    ax.set_xticks([k + 0.4 for k in range(len(cases))])
    ax.set_xticklabels([f"{c[0]}\n{c[1]}/{c[2]}" for c in cases], rotation=45, ha="right",
                       fontsize=7)
    ax.set_ylabel("median time (ms)")
    ax.set_title("time per phase by workload")
    ax.legend(fontsize=7, ncol=3)
    fig.tight_layout()
    written.append(out / "phases.png")
    fig.savefig(written[-1], dpi=100)
    plt.close(fig)
    by_workload: dict[str, list[tuple[int, float]]] = defaultdict(list)
    for (name, elements, _chain), phases_ns in medians.items():
        by_workload[name].append((elements, phases_ns.get("total", 0) / 1e6))
    scaling = {k: sorted(v) for k, v in by_workload.items() if len({e for e, _ in v}) > 1}
    if scaling:
        fig, ax = plt.subplots(figsize=(6, 4.5))
        for name, points in scaling.items():
            ax.plot([p[0] for p in points], [p[1] for p in points], marker="o", label=name)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("elements")
        ax.set_ylabel("median total time (ms)")
        ax.set_title("scaling")
        ax.legend(fontsize=7)
        fig.tight_layout()
        written.append(out / "scaling.png")
        fig.savefig(written[-1], dpi=100)
        plt.close(fig)
    return written
