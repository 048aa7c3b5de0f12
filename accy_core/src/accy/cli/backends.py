"""``accy backends``: list every discovered backend and every plugin that failed to load."""

from __future__ import annotations

import argparse

__all__ = ["backend_lines", "register"]


def backend_lines(include_testing: bool = False) -> list[str]:
    """Return one line per backend, then one per plugin failure.

    Backend lines read ``cpu: available (<device name>)`` or ``vulkan: unavailable
    (<reason>)``. Testing-only backends (the in-memory ``recording`` backend) are listed
    only with ``include_testing``, ending with `` [testing only]``. Failure lines read
    ``plugin 'x' (dist y) failed: <cause>``.
    """
    from accy.errors import AccyError
    from accy.plugins import backend_descriptors, open_backend, plugin_failures, probe_backend

    lines = []
    for name, desc in sorted(backend_descriptors().items()):
        if desc.testing_only and not include_testing:
            continue
        available, reason = probe_backend(name)
        if available:
            try:
                state = f"available ({open_backend(name).capabilities().device_name})"
            except AccyError as e:
                state = f"unavailable ({getattr(e, 'reason', '') or e})"
        else:
            state = f"unavailable ({reason or 'no reason given'})"
        lines.append(f"{name}: {state}" + (" [testing only]" if desc.testing_only else ""))
    lines.extend(str(failure) for failure in plugin_failures())
    return lines


def _backends(args: argparse.Namespace) -> int:
    for line in backend_lines(include_testing=args.all):
        print(line)
    return 0


def register(subparsers) -> None:
    """Add the ``backends`` command."""
    p = subparsers.add_parser(
        "backends", help="list backends, whether each runs here, and plugin errors",
        description="List every backend that plugins provide, whether it is available on this "
        "machine (and why not), then every plugin that failed to load.")
    p.add_argument("--all", action="store_true",
                   help="also list testing-only backends (the in-memory 'recording' backend)")
    p.set_defaults(func=_backends)
