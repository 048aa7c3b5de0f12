"""``accy run PROGRAM.accy --input a.npy ... [--backend cpu] [--out out.npz]``."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

from accy.errors import InputError

__all__ = ["load_program", "register"]


def load_program(path: str):
    """Parse the text-form program at ``path``.

    Raises:
        InputError: the file does not exist or cannot be read.
        ParseError / VerifyError: the text is not a valid module.
    """
    from accy.ir import parse_module

    p = Path(path)
    if not p.exists():
        raise InputError(f"program file {path!r} does not exist")
    if not p.is_file():
        raise InputError(f"program file {path!r} is not a file; pass a .accy file")
    try:
        text = p.read_text()
    except (OSError, UnicodeDecodeError) as e:
        raise InputError(f"cannot read program {path!r}: {e}") from e
    try:
        return parse_module(text, source=path)
    except Exception as e:
        if hasattr(e, "message") and f"(at {path}:" not in e.message:
            e.message = f"{path}:{e.message}" if getattr(e, "line", 0) else f"{path}: {e.message}"
        raise


_NPY_MAGIC = b"\x93NUMPY"
_SAVE_HINT = "save each input with numpy.save('x.npy', array)"


def _load_input(path: str) -> np.ndarray:
    """Read one ``.npy`` file (numpy's format; no pickled objects, no ``.npz`` archives).

    Raises:
        InputError: the file is missing, is not a .npy file (a .npz archive, text, CSV) or
            holds Python objects; the message says how to write a valid one.
    """
    try:
        with open(path, "rb") as f:
            head = f.read(len(_NPY_MAGIC))
    except OSError as e:
        raise InputError(f"cannot read input {path!r}: {e.strerror or e}") from e
    if head != _NPY_MAGIC:
        what = "a .npz archive" if head.startswith(b"PK") else "not a .npy file"
        raise InputError(f"input {path!r} is {what}: every --input must be one array in "
                         f"numpy's .npy format; {_SAVE_HINT}")
    try:
        return np.load(path, allow_pickle=False)
    except ValueError as e:
        if "allow_pickle" in str(e):  # numpy's advice would be to trust the file: no
            raise InputError(f"input {path!r} holds Python objects (dtype object), not "
                             f"numbers; {_SAVE_HINT} with a numeric dtype") from e
        raise InputError(f"cannot read input {path!r} as a .npy array: {e}") from e
    except OSError as e:
        raise InputError(f"cannot read input {path!r} as a .npy array: {e}") from e


def _run(args: argparse.Namespace) -> int:
    import accy

    module = load_program(args.program)
    inputs = [_load_input(p) for p in args.input]
    exe = accy.compile(module, backend=args.backend, function=args.function)
    outs = exe(*inputs)
    if args.out:
        try:  # an open file, so that numpy does not append ".npz" to the path
            with open(args.out, "wb") as f:
                np.savez(f, **{f"out{i}": o for i, o in enumerate(outs)})
        except OSError as e:
            raise InputError(f"cannot write outputs to {args.out!r}: {e}") from e
        print(f"wrote {len(outs)} outputs to {args.out}")
    else:
        for i, o in enumerate(outs):
            print(f"out{i}: {o.dtype}{list(o.shape)}")
            print(np.array2string(o, threshold=64), file=sys.stdout)
    return 0


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "run",
        help="compile and run a text-form program on .npy inputs",
        description="Compile PROGRAM.accy and run it on .npy inputs.",
    )
    p.add_argument("program", help="program in accy's text form (.accy)")
    p.add_argument(
        "--input",
        "-i",
        action="append",
        default=[],
        metavar="FILE.npy",
        help="one input per function parameter, in order",
    )
    p.add_argument("--backend", "-b", default="cpu", help="backend name (default: cpu)")
    p.add_argument("--function", "-f", default=None, help="function to run (default: the first)")
    p.add_argument("--out", "-o", default=None, help="write outputs to this .npz file")
    p.set_defaults(func=_run)
