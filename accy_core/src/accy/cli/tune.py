"""``accy tune PROGRAM.accy --backend B`` and ``accy tune --families --backend B``.

Sweeps launch candidates (per region of the program) or kernel-library schedules (every
family's variants and candidates on each problem: every dtype, the default sizes, plus
``--size`` or a ``--workload``'s sizes), shows a progress bar, prints the winners (for
families a table: default vs winner, times in microseconds, speed-up, rejected candidates)
and writes the tuning cache (``ACCY_TUNING_CACHE``). ``--export FILE`` / ``--import FILE``
copy the cache to or from a versioned, checksummed archive (import is all-or-nothing).
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
        return _tune_families(args, cache, progress)
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


def _tune_families(args: argparse.Namespace, cache, progress: bool) -> int:
    from accy.tuning.family_sweep import emit_family_records, format_table, sweep_families

    sizes: dict[str, list[int]] = {}
    if args.workload:
        from accy.profiling.workloads import build
        from accy.tuning.family_sweep import workload_sizes

        sizes = workload_sizes(build(args.workload, args.elements, args.chain).module)
    for n in args.size or ():
        for fam in args.family or _all_families():
            sizes.setdefault(fam, []).append(n)
    results = sweep_families(args.backend, warmup=args.warmup, samples=args.samples,
                             margin=args.margin, cache=cache, progress=progress,
                             names=args.family or None, sizes=sizes,
                             defaults=not args.no_defaults)
    if not results:
        print("no kernel-library families (or problems) to tune")
        return 0
    print(format_table(results))
    if args.records:
        from accy.families import backend_object
        from accy.profiling.records import RecordWriter

        device = backend_object(args.backend).capabilities().device_fingerprint
        with open(args.records, "w", encoding="utf-8") as f:
            emit_family_records(RecordWriter(f, args.backend, device), results)
        print(f"records: {args.records}")
    print(f"tuning cache: {cache.path}")
    return 0


def _all_families() -> list[str]:
    from accy.families import families

    return sorted(families())


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
    p.add_argument("--family", action="append",
                   help="families: sweep only this family (repeatable)")
    p.add_argument("--size", type=int, action="append",
                   help="families: also sweep problems of this size (elements; repeatable)")
    p.add_argument("--workload", help="families: also sweep the library calls' sizes of this "
                   "profiling workload (accy profile --list)")
    p.add_argument("--elements", type=int, default=1 << 16, help="--workload elements")
    p.add_argument("--chain", type=int, default=4, help="--workload chain length")
    p.add_argument("--no-defaults", action="store_true",
                   help="families: skip the fixed default problem sizes")
    p.add_argument("--records", metavar="FILE",
                   help="families: write JSON-lines candidate/rejected/best records")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.set_defaults(func=_tune)
