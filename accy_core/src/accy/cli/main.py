"""The ``accy`` command: one subcommand per module ``accy.cli.<name>``.

Each command module exposes ``register(subparsers)``, which adds its parser and sets
``func`` (``func(args) -> int``) as a default. Modules in :data:`COMMANDS` that are not
installed yet are skipped; one that fails to import for another reason still shows up, and
running it explains why. An :class:`~accy.errors.AccyError` prints ``error: <message>`` on
stderr and exits 2, without a traceback. A closed output pipe (``accy kernels | head``) ends
the command quietly with status 141 (128 + SIGPIPE, as for a program killed by it).
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence

from accy.errors import AccyError

__all__ = ["COMMANDS", "build_parser", "main"]

COMMANDS: tuple[str, ...] = ("backends", "kernels", "run", "ir", "compile", "tune", "profile",
                             "cache")
"""Command module names under ``accy.cli``, in ``--help`` order."""


def _broken_command(name: str, error: BaseException):
    cause = f"{type(error).__name__}: {error}"

    def run(args: argparse.Namespace) -> int:
        raise AccyError(f"command '{name}' failed to load: {cause}; please report")

    def register(subparsers) -> None:
        p = subparsers.add_parser(name, help=f"(unavailable: {cause})")
        p.add_argument("rest", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)
        p.set_defaults(func=run)

    return register


def build_parser() -> argparse.ArgumentParser:
    """Return the ``accy`` argument parser with every installed command registered."""
    import accy

    parser = argparse.ArgumentParser(
        prog="accy", description="accy: a plugin-based compiler framework for accelerators.")
    parser.add_argument("--version", action="version", version=f"accy {accy.__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", title="commands")
    for name in COMMANDS:
        module_name = f"accy.cli.{name}"
        try:
            register = importlib.import_module(module_name).register
        except ModuleNotFoundError as e:
            if e.name == module_name:
                continue
            register = _broken_command(name, e)
        except Exception as e:  # noqa: BLE001  (one broken command must not hide the others)
            register = _broken_command(name, e)
        register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``accy`` command line with ``argv`` (default ``sys.argv[1:]``); return the exit code.

    Exit codes: 0 success, 2 usage or accy error (``error: <message>`` on stderr), 130
    interrupted, 141 the reader of stdout went away (``| head``).
    """
    try:
        code = _main(argv)
        sys.stdout.flush()  # a closed pipe raises here, not in the interpreter's exit flush
        return code
    except BrokenPipeError:
        _silence_stdout()
        return 141


def _silence_stdout() -> None:
    """Point stdout at /dev/null so that the interpreter's final flush does not fail again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):  # no real stdout (captured): nothing left to flush
        pass


def _main(argv: Sequence[str] | None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as e:  # argparse exits on --help, --version and usage errors
        return e.code if isinstance(e.code, int) else 2
    func = getattr(args, "func", None)
    if func is None:
        parser.print_help(sys.stderr)
        return 2
    try:
        return int(func(args) or 0)
    except AccyError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("error: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
