"""``accy ir PROGRAM.accy --stage kernel``: print the IR after a stage."""

from __future__ import annotations

import argparse

from accy.cli.run import load_program

__all__ = ["register"]


def _ir(args: argparse.Namespace) -> int:
    from accy.passes import STAGES, PassContext, run_stages
    from accy.plugins import open_backend

    module = load_program(args.program)
    profile = open_backend(args.backend).target_profile() if args.backend else None
    if args.stage not in STAGES:
        from accy.errors import InputError, known_names

        raise InputError(f"unknown stage {args.stage!r}; {known_names(STAGES, args.stage)}")
    products = run_stages(module, PassContext(target_profile=profile, backend=args.backend),
                          until=args.stage)
    final = products[-1].module
    print(final.to_text(), end="")
    for name, kernel in sorted(final.attrs.get("kernels", {}).items()):
        print(f"\n// kernel {name}")
        print(kernel.to_text(), end="")
    return 0


def register(subparsers) -> None:
    p = subparsers.add_parser("ir", help="print a program's IR after a compilation stage",
                              description="Print PROGRAM.accy after one of the stages "
                              "contract, tensor, dispatch, memory, kernel, target.")
    p.add_argument("program")
    p.add_argument("--stage", "-s", default="kernel", help="stage to stop after (default: kernel)")
    p.add_argument("--backend", "-b", default=None,
                   help="legalize against this backend's target profile")
    p.set_defaults(func=_ir)
