"""``accy compile PROGRAM.accy --backend B [--target T] --emit FORMAT -o DIR``.

Writes one file per kernel: ``DIR/<kernel>.<ext>``. Formats come from the backend
(``llvm``, ``asm``, ``obj`` on the CPU; ``ptx`` on CUDA; ``spirv`` on Vulkan).
"""

from __future__ import annotations

import argparse
import inspect
from pathlib import Path

from accy.cli.run import load_program

__all__ = ["register"]

_EXT = {"llvm": "ll", "asm": "s", "obj": "o", "ptx": "ptx", "spirv": "spv"}


def _compile(args: argparse.Namespace) -> int:
    from accy.errors import InputError, UnsupportedError
    from accy.passes import PassContext, run_stages

    be = _open_for_compile(args.backend)
    caps = be.capabilities()
    if args.emit not in caps.artifact_formats:
        raise UnsupportedError(
            f"backend '{args.backend}' cannot emit {args.emit!r}; "
            f"it emits: {', '.join(caps.artifact_formats)}",
            feature=args.emit,
            backend=args.backend,
        )
    extra = {"target": args.target} if args.target else {}
    if extra and "target" not in inspect.signature(be.emit).parameters:
        raise UnsupportedError(
            f"backend '{args.backend}' takes no --target (got {args.target!r}); drop --target",
            feature="target",
            backend=args.backend,
        )
    module = load_program(args.program)
    if not module.functions:  # as accy run / accy.compile say, rather than writing nothing
        raise InputError(f"{args.program}: module has no functions to compile")
    products = run_stages(
        module, PassContext(target_profile=be.target_profile(), backend=args.backend)
    )
    out = Path(args.output)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as e:  # a file of that name, a parent that cannot hold a folder
        raise InputError(f"cannot create the output directory {args.output!r}: "
                         f"{e.strerror or e}") from e
    for name, kernel in sorted(products[-1].module.attrs.get("kernels", {}).items()):
        data = be.emit(kernel, args.emit, **extra)
        path = out / f"{name}.{_EXT.get(args.emit, args.emit)}"
        try:
            path.write_bytes(data if isinstance(data, bytes) else data.encode())
        except OSError as e:
            raise InputError(f"cannot write {str(path)!r}: {e.strerror or e}") from e
        print(path)
    return 0


def _open_for_compile(name: str):
    """Open backend ``name``; if it is unavailable here but its descriptor offers
    ``open_compile_only`` (CUDA without a driver), open that instead: emitting needs no device."""
    from accy.errors import BackendUnavailable
    from accy.plugins import backend_descriptors, open_backend

    try:
        return open_backend(name)
    except BackendUnavailable:
        opener = getattr(backend_descriptors().get(name), "open_compile_only", None)
        if opener is None:
            raise
        return opener()


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "compile",
        help="write each kernel's artifact ahead of time",
        description="Compile PROGRAM.accy and write one artifact per kernel.",
    )
    p.add_argument("program")
    p.add_argument("--backend", "-b", default="cpu")
    p.add_argument("--target", "-t", default=None, help="target override (e.g. sm_90 for cuda)")
    p.add_argument(
        "--emit", "-e", default="llvm", help="artifact format (llvm, asm, obj, ptx, spirv)"
    )
    p.add_argument("--output", "-o", required=True, help="output directory")
    p.set_defaults(func=_compile)
