"""The accy exception tree.

Every error accy raises on purpose derives from :class:`AccyError`. Each class also inherits
the builtin exception a user would naturally catch (``ValueError``, ``TypeError``,
``IndexError``, ``RuntimeError``), keeps its structured fields as attributes and stays
picklable (``args`` holds everything ``__init__`` needs).

Message house style: subject first, then expected vs got, then the fix; lower-case start,
no trailing period. Unknown names list the known ones.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable

__all__ = [
    "AccyError",
    "AccyWarning",
    "CacheWarning",
    "IRError",
    "VerifyError",
    "ParseError",
    "PassError",
    "UnsupportedError",
    "CapabilityError",
    "CodegenError",
    "BackendError",
    "BackendUnavailable",
    "CompileError",
    "LaunchError",
    "OutOfResources",
    "PluginError",
    "TuningCacheError",
    "InputError",
    "InternalError",
    "did_you_mean",
    "install_hint",
    "known_names",
]


def _closeness(name: str, other: str) -> float:
    a_ns, _, a_tail = name.rpartition(".")
    b_ns, _, b_tail = other.rpartition(".")
    if a_ns and a_ns == b_ns:  # same namespace: only the last part can be misspelt
        return difflib.SequenceMatcher(None, a_tail, b_tail).ratio()
    return difflib.SequenceMatcher(None, name, other).ratio()


def did_you_mean(name: str, names: Iterable[str]) -> str:
    """Return ``"did you mean 'x'? "`` for the closest spellings of ``name``, or ``""``.

    Closeness is :class:`difflib.SequenceMatcher`'s ratio (at least 0.7, at most 3 names,
    best first); names in the same dotted namespace (``arith.ad`` vs ``arith.add``) are
    compared by their last part only, so the shared prefix does not make every op close.
    """
    if not isinstance(name, str):  # backend=3, op=None: nothing to compare spellings with
        return ""
    scored = sorted((-_closeness(name, n), n) for n in set(names) if n != name)
    close = [n for score, n in scored[:3] if -score >= 0.7]
    if not close:
        return ""
    return "did you mean " + " or ".join(f"'{c}'" for c in close) + "? "


def known_names(names: Iterable[str], name: str | None = None) -> str:
    """Return ``"known: a, b, c"`` for messages about an unknown name.

    With ``name`` (the unknown one) the text starts with :func:`did_you_mean`'s suggestion:
    ``"did you mean 'add'? known: add, sub"``.
    """
    pool = sorted(set(names))
    hint = did_you_mean(name, pool) if name is not None else ""
    return hint + "known: " + ", ".join(pool)


def install_hint(folder: str, extra: str = "") -> str:
    """How to install one of accy's own packages, which are not published on PyPI.

    ``install_hint("accy_kernels")`` → ``"not on PyPI: pip install ./accy_kernels in a clone of
    the accy repository"``; ``extra`` adds ``[extra]``.
    """
    target = f"'./{folder}[{extra}]'" if extra else f"./{folder}"
    return f"not on PyPI: pip install {target} in a clone of the accy repository"


class AccyError(Exception):
    """Root of every error accy raises on purpose."""

    def __init__(self, message: str, *args: object) -> None:
        super().__init__(message, *args)
        self.message = message

    def __str__(self) -> str:
        return self.message

    def __reduce__(self):  # keep subclasses with keyword fields picklable
        return (_rebuild, (type(self), self.message, self.__dict__))


def _rebuild(cls: type, message: str, state: dict) -> AccyError:
    obj = cls.__new__(cls)
    Exception.__init__(obj, message)
    obj.__dict__.update(state)
    return obj


class IRError(AccyError, ValueError):
    """Malformed tensor IR or kernel IR."""


class VerifyError(IRError):
    """The verifier rejected a module, or the builder rejected an op (shape, dtype, attribute).

    Attributes:
        op: the op name (``"arith.add"``) or ``None``.
        position: ``"@func:op#3"`` style location or ``None``.
    """

    def __init__(self, message: str, op: str | None = None, position: str | None = None) -> None:
        super().__init__(message)
        self.op = op
        self.position = position


class ParseError(IRError):
    """Text IR (or a pass pipeline) that does not parse; carries line, column and a caret line."""

    def __init__(self, message: str, line: int = 0, column: int = 0, source_line: str = "") -> None:
        caret = f"\n  {source_line}\n  {' ' * max(column - 1, 0)}^" if source_line else ""
        super().__init__(f"{line}:{column}: {message}{caret}" if line else message)
        self.line = line
        self.column = column
        self.source_line = source_line
        self.reason = message


class PassError(AccyError, RuntimeError):
    """A pass failed; names the pass and its position in the pipeline."""

    def __init__(self, message: str, pass_name: str = "", position: int = -1) -> None:
        super().__init__(message)
        self.pass_name = pass_name
        self.position = position


class UnsupportedError(AccyError, TypeError):
    """A feature accy does not support here; names the feature, backend and an alternative."""

    def __init__(
        self, message: str, feature: str = "", backend: str = "", alternative: str = ""
    ) -> None:
        super().__init__(message)
        self.feature = feature
        self.backend = backend
        self.alternative = alternative


class CapabilityError(UnsupportedError):
    """The target profile of a backend cannot run this (dtype, atomics, f64 math, ...)."""


class CodegenError(AccyError, RuntimeError):
    """LLVM rejected generated IR, or code generation crashed in the worker process
    (``crashed``: the worker died, an LLVM abort or segfault, not a diagnostic)."""

    def __init__(self, message: str, llvm_message: str = "", ir_excerpt: str = "",
                 crashed: bool = False) -> None:
        super().__init__(message)
        self.llvm_message = llvm_message
        self.ir_excerpt = ir_excerpt
        self.crashed = crashed


class BackendError(AccyError, RuntimeError):
    """A backend failed at run time."""


class BackendUnavailable(BackendError):
    """A backend cannot be used here; ``reason`` is its probe's answer."""

    def __init__(self, message: str, backend: str = "", reason: str = "") -> None:
        super().__init__(message)
        self.backend = backend
        self.reason = reason


class CompileError(BackendError):
    """An external tool (ptxas, spirv-val, the driver JIT) rejected an artifact."""

    def __init__(self, message: str, tool: str = "", stderr: str = "", repro: str = "") -> None:
        super().__init__(message)
        self.tool = tool
        self.stderr = stderr
        self.repro = repro


class LaunchError(BackendError):
    """A kernel launch failed (bad geometry, device fault, wrong arguments)."""


class OutOfResources(BackendError):
    """A launch or allocation needs more of a resource than the device has."""

    def __init__(self, message: str, resource: str = "", required: int = 0, limit: int = 0) -> None:
        super().__init__(message)
        self.resource = resource
        self.required = required
        self.limit = limit


class PluginError(AccyError, RuntimeError):
    """A plugin failed to load or its hook raised."""

    def __init__(
        self, message: str, plugin: str = "", distribution: str = "", cause: str = ""
    ) -> None:
        super().__init__(message)
        self.plugin = plugin
        self.distribution = distribution
        self.cause = cause


class TuningCacheError(AccyError, ValueError):
    """A tuning cache file or archive is corrupt, truncated or of the wrong version."""

    def __init__(self, message: str, path: str = "", reason: str = "") -> None:
        super().__init__(message)
        self.path = path
        self.reason = reason


class InputError(AccyError, ValueError):
    """Bad user input at call time (count, shape, dtype) or a malformed input file."""


class InternalError(AccyError, RuntimeError):
    """An accy invariant failed; this is a bug, please report it."""


class AccyWarning(Warning):
    """Root of every warning accy issues on purpose (filter them with this category)."""


class CacheWarning(AccyWarning, RuntimeWarning):
    """An on-disk cache file or directory was not used: unreadable, corrupt, of another
    version, or refused as unsafe (owned by another user, writable by group or others).

    Accy then carries on without it (rebuilding the entry, or compiling without the disk
    cache); the warning names the file or directory and why.

    Attributes:
        path: the file or directory concerned.
        reason: a short tag (``corrupt``, ``version``, ``unsafe``, ``unwritable``, ...).
    """

    def __init__(self, message: str, path: str = "", reason: str = "") -> None:
        super().__init__(message)
        self.path = path
        self.reason = reason
