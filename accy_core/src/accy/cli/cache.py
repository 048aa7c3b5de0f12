"""``accy cache info [--json]`` and
``accy cache clear [artifacts|tuning|pipelines|programs|all]``."""

from __future__ import annotations

import argparse
import json

__all__ = ["register"]

_WHICH = ("artifacts", "tuning", "pipelines", "programs", "all")


def _human(n: int) -> str:
    size = float(n)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if size < 1024 or unit == "GiB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{n} B"


def _info(args: argparse.Namespace) -> int:
    from accy import config
    from accy.runtime.cache_inventory import cache_reports

    reports = cache_reports()
    cap = config.cache_max_bytes()
    if args.json:
        doc = {"cache_dir": str(config.cache_dir()), "max_bytes": cap,
               "caches": [r.as_dict() for r in reports]}
        print(json.dumps(doc, indent=1))
        return 0
    print(f"cache directory: {config.cache_dir()}")
    for r in reports:
        limit = ""
        if r.name == "artifacts":
            limit = f", cap {_human(cap)}" if cap else ", no cap"
        print(f"{r.name:<10} {r.entries} entries, {r.bytes} bytes ({_human(r.bytes)}{limit})  "
              f"{r.path}" + (f"  [{r.note}]" if r.note else ""))
    return 0


def _clear(args: argparse.Namespace) -> int:
    from accy.errors import InputError
    from accy.runtime.cache_inventory import clear_caches

    try:
        cleared = clear_caches(args.which or ["all"])
    except OSError as e:
        raise InputError(f"cannot clear the cache: {e}") from e
    for r in cleared:
        print(f"cleared {r.name}: {r.entries} entries, {r.bytes} bytes ({r.path})")
    return 0


def register(subparsers) -> None:
    """Add the ``cache`` command (``info`` and ``clear``)."""
    p = subparsers.add_parser(
        "cache", help="show or clear the on-disk caches (artifacts, tuning, pipelines, programs)",
        description="Show where accy's on-disk caches are and what they hold, or clear them. "
        "The artifact cache keeps at most ACCY_CACHE_MAX_BYTES (least recently used entries "
        "are evicted first).")
    sub = p.add_subparsers(dest="cache_command", metavar="ACTION", title="actions")
    info = sub.add_parser("info", help="path, entries and bytes of each cache",
                          description="Print path, entry count and size of each cache.")
    info.add_argument("--json", action="store_true", help="print one JSON document")
    info.set_defaults(func=_info)
    clear = sub.add_parser("clear", help="delete cache entries (default: all caches)",
                           description="Delete the entries of the named caches (default: all); "
                           "nothing else in the cache directory is touched.")
    clear.add_argument("which", nargs="*", metavar="CACHE",
                       help=f"which caches to clear: {', '.join(_WHICH)} (default: all)")
    clear.set_defaults(func=_clear)
    p.set_defaults(func=lambda args: _info(argparse.Namespace(json=False)))
