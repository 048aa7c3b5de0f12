"""A warning for numpy's host random number generators called inside an ``accy.jit`` function.

``np.random.rand(3)`` (or ``rng.normal(...)`` of a ``numpy.random.Generator``) in a traced
function runs once, while the function is traced: its numbers become constants of the
compiled program, and every call returns the same ones (numba's ``njit`` draws new ones per
call; JAX behaves as accy does). :func:`host_random_uses` finds such uses in a function's
byte code (its own code and the functions and lambdas defined in it): a global or closure
variable bound to ``numpy.random``, a function of it or a generator object, and
``<numpy>.random`` attribute reads. Helpers the function calls are not followed.
"""

from __future__ import annotations

import dis
import sys
from types import CodeType, FunctionType, ModuleType
from typing import Any

__all__ = ["host_random_uses"]

_LOADS = ("LOAD_GLOBAL", "LOAD_NAME", "LOAD_DEREF", "LOAD_CLASSDEREF")


def _is_host_random(v: Any, np: ModuleType) -> bool:
    rnd = np.random
    if isinstance(v, ModuleType):
        return v is rnd or v.__name__.startswith("numpy.random")
    if isinstance(v, (rnd.Generator, rnd.RandomState, rnd.BitGenerator)):
        return True
    owner = getattr(v, "__self__", None)  # np.random.rand: a bound method of the global state
    return isinstance(owner, (rnd.Generator, rnd.RandomState)) or (
        callable(v) and str(getattr(v, "__module__", "") or "").startswith("numpy.random"))


def _codes(code: CodeType) -> list[CodeType]:
    out, todo = [], [code]
    while todo:
        c = todo.pop()
        out.append(c)
        todo.extend(k for k in c.co_consts if isinstance(k, CodeType))
    return out


def host_random_uses(fn: Any) -> list[str]:
    """What ``fn`` reads of numpy's host random generators (``"np.random"``, ``"rng"``):
    empty when numpy is not imported or ``fn`` is not a plain Python function."""
    np = sys.modules.get("numpy")
    if np is None or not isinstance(fn, FunctionType):
        return []
    names = fn.__globals__
    cells = dict(zip(fn.__code__.co_freevars, fn.__closure__ or (), strict=False))
    found: list[str] = []
    for code in _codes(fn.__code__):
        prev: tuple[str, Any] | None = None
        for ins in dis.get_instructions(code):
            if ins.opname in _LOADS:
                name = str(ins.argval)
                if code is fn.__code__ and ins.opname != "LOAD_GLOBAL" and name in cells:
                    try:
                        v = cells[name].cell_contents
                    except ValueError:  # an empty cell
                        v = None
                elif ins.opname in ("LOAD_GLOBAL", "LOAD_NAME"):
                    v = names.get(name, None)
                else:
                    v = None
                if v is not None and _is_host_random(v, np):
                    found.append(name)
                prev = (name, v)
                continue
            if ins.opname in ("LOAD_ATTR", "LOAD_METHOD") and prev is not None \
                    and prev[1] is np and ins.argval == "random":
                found.append(f"{prev[0]}.random")
            prev = None
    return list(dict.fromkeys(found))
