"""``accy profile`` (run a suite or one case, write JSON-lines records) and
``accy profile report RUN.jsonl`` (print a table, write PNG plots).

Examples::

    accy profile --suite quick --backend cpu -o run.jsonl
    accy profile --workload mlp_two_layer --elements 32 --chain 64 --samples 5
    accy profile --suite quick --sweep -o run.jsonl     # plus launch/family sweeps
    accy profile report run.jsonl --plots plots/
    accy profile report run.jsonl --no-plots            # the table only

The output file appears only when the run finishes (a failed or interrupted run leaves
none). Plots need matplotlib (the ``accy-core[plots]`` extra); without it the report prints
the table and one line saying the plots were skipped.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO

from accy.cli.helptext import plain

__all__ = ["register"]

_NO_MATPLOTLIB = ("plots skipped: matplotlib is not installed (it is the accy-core[plots] "
                  "extra: pip install matplotlib); --no-plots silences this")


@contextlib.contextmanager
def _atomic_text(path: Path) -> Iterator[IO[str]]:
    """Write to a temporary file beside ``path``; publish it with ``os.replace`` only if the
    block finishes, else remove it (no partial file after an error or Ctrl-C)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w") as stream:
            yield stream
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _cases(args: argparse.Namespace) -> list[tuple[str, int, int]]:
    from accy.errors import InputError
    from accy.profiling.suites import suite_cases

    if args.workload:
        if args.elements is None or args.chain is None:
            raise InputError("accy profile --workload needs --elements N and --chain C")
        return [(args.workload, args.elements, args.chain)]
    return suite_cases(args.suite)


def _profile(args: argparse.Namespace) -> int:
    from accy.profiling.runner import run_profile

    cases = _cases(args)
    suite = None if args.workload else args.suite
    progress = not args.no_progress
    if args.output in (None, "-"):
        w = run_profile(cases, args.backend, sys.stdout, samples=args.samples,
                        warmup=args.warmup, sweep=args.sweep, suite=suite, progress=progress)
    else:
        with _atomic_text(Path(args.output)) as stream:
            w = run_profile(cases, args.backend, stream, samples=args.samples,
                            warmup=args.warmup, sweep=args.sweep, suite=suite,
                            progress=progress)
        print(f"wrote {len(w.records)} records to {args.output}", file=sys.stderr)
    return 0 if w.records[-1]["ok"] else 1


def _report(args: argparse.Namespace) -> int:
    from accy.profiling.records import read_records
    from accy.profiling.report import render_table, write_plots

    records = read_records(args.run)
    print(render_table(records))
    if args.no_plots:
        return 0
    try:
        import matplotlib  # noqa: F401  (optional: the accy-core[plots] extra)
    except ImportError:
        print(_NO_MATPLOTLIB, file=sys.stderr)
        return 0
    plots = args.plots or str(Path(args.run).with_suffix("")) + "_plots"
    for path in write_plots(records, plots):
        print(f"wrote {path}")
    return 0


# argparse writes an optional subcommand as if it were required ("... report ..."):
# spell out both forms.
_USAGE = ("accy profile [--suite SUITE | --workload W --elements N --chain C] [options]\n"
          "       accy profile report RUN.jsonl [--plots DIR]")


def register(subparsers) -> None:
    """Add the ``profile`` command and its ``report`` subcommand."""
    p = subparsers.add_parser("profile", help="run the profiling suite, or report on a run",
                              description=plain(__doc__), usage=_USAGE,
                              formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--suite", default="quick", help="quick, standard or scaling (default quick)")
    p.add_argument("--workload", help="profile one workload instead of a suite")
    p.add_argument("--elements", type=int, help="the workload's size parameter")
    p.add_argument("--chain", type=int, help="the workload's second parameter")
    p.add_argument("--backend", default="cpu", help="backend to run on (default cpu)")
    p.add_argument("--samples", type=int, default=3, help="timed samples per case (default 3)")
    p.add_argument("--warmup", type=int, default=1, help="untimed samples first (default 1)")
    p.add_argument("--sweep", action="store_true",
                   help="also sweep launch candidates and family schedules (writes the cache)")
    p.add_argument("-o", "--output", help="JSON-lines file (default: stdout)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.set_defaults(func=_profile)
    sub = p.add_subparsers(dest="profile_command", metavar="report", title="subcommand",
                           description="optional: 'accy profile report RUN.jsonl' reports on "
                                       "a run instead of profiling")
    r = sub.add_parser("report", help="print a table and write PNG plots of a run")
    r.add_argument("run", help="JSON-lines file written by 'accy profile'")
    r.add_argument("--plots", help="directory for the PNG files (default: RUN_plots/)")
    r.add_argument("--no-plots", action="store_true",
                   help="print the table only (plots need matplotlib: accy-core[plots])")
    r.set_defaults(func=_report)
