"""``accy tune PROGRAM.accy --backend B`` and ``accy tune --families --backend B``.

Sweeps launch candidates (per region of the program) or kernel-library schedules (every
family's variants and candidates), shows a progress bar, prints the winners and writes the
tuning cache (``ACCY_TUNING_CACHE``). ``--export FILE`` / ``--import FILE`` copy the cache
to or from a versioned, checksummed archive (import is all-or-nothing).
"""

from __future__ import annotations

import argparse
import sys

from accy.cli.helptext import plain

__all__ = ["register"]


def _print(results, out) -> None:
    for r in results:
        if r.best is None:
            print(f"{r.kernel:<32} skipped: {r.skipped}", file=out)
            continue
        note = "cached" if r.cached else "not cached"
        print(f"{r.kernel:<32} {r.best.label:<22} {r.best.median_ns / 1e3:10.1f} us "
              f"({len(r.measurements)} candidates, {note})", file=out)


def _tune(args: argparse.Namespace) -> int:
    from accy.errors import InputError
    from accy.tuning.archive import export_archive, import_archive
    from accy.tuning.cache import TuningCache

    cache = TuningCache(args.cache) if args.cache else TuningCache()
    if args.import_path:
        n = import_archive(args.import_path, cache)
        print(f"imported {n} entries into {cache.path}")
        return 0
    if args.export_path:
        n = export_archive(args.export_path, cache)
        print(f"exported {n} entries to {args.export_path}")
        return 0
    progress = not args.no_progress
    if args.families:
        from accy.tuning.sweep import sweep_families

        results = sweep_families(args.backend, warmup=args.warmup, samples=args.samples,
                                 margin=args.margin, cache=cache, progress=progress)
        if not results:
            print("no kernel-library families installed (accy.families); nothing to tune")
            return 0
    else:
        if not args.program:
            raise InputError("accy tune: give PROGRAM.accy, or --families, --export, --import")
        from accy.cli.run import load_program
        from accy.tuning.sweep import sweep_program

        results = sweep_program(load_program(args.program), args.backend,
                                function=args.function, warmup=args.warmup,
                                samples=args.samples, cache=cache, progress=progress)
    _print(results, sys.stdout)
    print(f"tuning cache: {cache.path}")
    return 0


def register(subparsers) -> None:
    """Add the ``tune`` command."""
    p = subparsers.add_parser("tune", help="measure launch candidates and cache the best",
                              description=plain(__doc__),
                              formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("program", nargs="?", help="tensor IR program (.accy)")
    p.add_argument("--backend", default="cpu", help="backend to tune for (default cpu)")
    p.add_argument("--function", help="function to tune (default: the first)")
    p.add_argument("--families", action="store_true", help="tune kernel-library families")
    p.add_argument("--samples", type=int, default=5, help="timed launches per candidate")
    p.add_argument("--warmup", type=int, default=2, help="untimed launches per candidate")
    p.add_argument("--margin", type=float, default=0.03,
                   help="families: cache only if the runner-up is slower by this fraction")
    p.add_argument("--cache", help="tuning cache file (default: ACCY_TUNING_CACHE)")
    p.add_argument("--export", dest="export_path", metavar="FILE", help="export the cache")
    p.add_argument("--import", dest="import_path", metavar="FILE", help="import an archive")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.set_defaults(func=_tune)
