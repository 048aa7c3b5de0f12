"""``accy kernels [--json]``: list every kernel family, its variants and where each runs.

A variant runs on an available backend when the backend has every feature the variant
requires (``float_atomics`` for ``spmv.coo``); unavailable backends are listed with their
probe's reason. Families come from every plugin's ``accy_kernel_families()`` hook; with none
installed the command says so (and how to install accy's own, ``accy-kernels``).
"""

from __future__ import annotations

import argparse
import json

__all__ = ["kernel_table", "register"]


def _backends() -> tuple[dict[str, object], dict[str, str]]:
    from accy.plugins import backend_descriptors, open_backend, probe_backend

    live: dict[str, object] = {}
    missing: dict[str, str] = {}
    for name, desc in sorted(backend_descriptors().items()):
        if getattr(desc, "testing_only", False):
            continue
        ok, reason = probe_backend(name)
        if not ok:
            missing[name] = reason
            continue
        try:
            live[name] = open_backend(name)
        except Exception as e:  # noqa: BLE001  (one broken backend must not hide the list)
            missing[name] = f"{type(e).__name__}: {e}"
    return live, missing


def kernel_table() -> dict[str, object]:
    """Return ``{"families": [...], "unavailable_backends": {...}, "problems": [...]}``."""
    from accy.families import families, registry_problems, variant_runs_on

    live, missing = _backends()
    rows = []
    for name, fam in sorted(families().items()):
        variants = []
        for var in fam.variants:
            runs, why = [], {}
            for bname, be in live.items():
                ok, reason = variant_runs_on(var, be)
                if ok:
                    runs.append(bname)
                else:
                    why[bname] = reason
            variants.append({"name": f"{name}.{var.name}", "doc": var.doc, "runs_on": runs,
                             "not_on": why, "candidates": len(var.candidates)})
        rows.append({"family": name, "provider": fam.provider, "doc": fam.doc,
                     "variants": variants})
    return {"families": rows, "unavailable_backends": missing, "problems": registry_problems()}


def _run(args: argparse.Namespace) -> int:
    table = kernel_table()
    if args.json:
        print(json.dumps(table, indent=2))
        return 0
    if not table["families"]:
        from accy.errors import install_hint

        print("no kernel families installed: no plugin provides accy_kernel_families(); "
              f"accy's own are the package accy-kernels ({install_hint('accy_kernels')})")
    for fam in table["families"]:  # type: ignore[union-attr]
        print(f"{fam['family']}  ({fam['provider'] or '?'}): {fam['doc']}")
        for v in fam["variants"]:
            where = ", ".join(v["runs_on"]) or "no available backend"
            extra = "".join(f"; not on {b}: {r}" for b, r in v["not_on"].items())
            print(f"  {v['name']:<28} runs on: {where}{extra}")
    for name, reason in table["unavailable_backends"].items():  # type: ignore[union-attr]
        print(f"backend {name} unavailable: {reason}")
    for problem in table["problems"]:  # type: ignore[union-attr]
        print(f"problem: {problem}")
    return 0


def register(subparsers) -> None:
    """Add the ``kernels`` command to the ``accy`` parser."""
    p = subparsers.add_parser("kernels", help="list kernel families, variants and backends",
                              description="List every kernel-library family, its variants, "
                                          "and the available backends each variant runs on.")
    p.add_argument("--json", action="store_true", help="print the table as JSON")
    p.set_defaults(func=_run)
