"""What a trace of a Python function reads, as a key: the jit index's safety rule.

:func:`function_key` returns a digest of everything that ``accy.jit``'s trace of ``fn`` can
read besides its arguments, or ``None`` when some of it cannot be hashed cheaply and
deterministically (then the jit index is not used and the function is traced as always).
:func:`value_key` encodes one value (a static argument, a signature) by the same rules.
``docs/caches.md`` ("A known function's first call") states the rule for users.

Encoded:

- the code object, field by field, nested code objects (inner functions, lambdas,
  comprehensions) included: byte code, constants, names, variable names, file name,
  qualified name, first line and line table (so locations in messages are covered), flags
  and argument counts. Byte code that imports (``IMPORT_NAME``) or writes globals
  (``STORE_GLOBAL``/``DELETE_GLOBAL``) is refused, and so is a function naming a builtin
  of :data:`UNKEYED_BUILTINS` (``getattr``, ``globals``, ``eval``, ``hash``, ``open``, ...),
  an attribute of :data:`UNKEYED_ATTRIBUTES` (``m.__dict__``, frames, ``a.ctypes``) or
  whose globals are not a plain ``dict``;
- the source file's path, size and modification time when it exists (as numba does);
- defaults, keyword defaults, closure cells and the function's attributes (``f.scale``);
- every name of ``co_names`` (of every nested code object) found in the function's globals
  or, failing that, in the builtins, encoded by :func:`value_key` (names that are only
  attributes are part of the code and harmless to look up);
- values: ``None``, ``bool``, ``int``, ``float``, ``complex``, ``str``, ``bytes``, ``Ellipsis``;
  tuples, lists, sets, frozensets and dicts (in iteration order: the order a trace sees)
  and slices of those; numpy scalars, dtypes (by ``repr``: a structured one's fields) and
  numpy's own ufuncs; plain ``numpy.ndarray`` s (no subclass: a masked array's mask is not
  in its bytes) of at most :data:`MAX_ARRAY_BYTES` (dtype, shape, strides and the bytes'
  sha256; :data:`MAX_TOTAL_BYTES` in all);
  members of accy's and numpy's enums; user functions recursively (code, defaults,
  closure, attributes, the globals they name); ``accy.jit`` functions through their Python
  function; modules, functions and classes of accy, numpy and a few standard modules
  (:data:`KEYED_BY_VERSION`) by name, a module together with the attributes the code names
  (so ``np.sqrt`` replaced by a user function is seen; a function of theirs is one compiled
  from their files, a class or builtin one found under its name there), except those of
  :data:`UNKEYED_NAMED` (``eval`` under another name, ``np.load``: they read what no key
  covers). Anything else (a user class, an object with attributes, a partial, a name bound
  to a user module) makes the key ``None``.

Those modules' own code is keyed elsewhere: accy's (and accy_kernels') by its source files
(:func:`accy.runtime.pipeline_cache.source_fingerprint`), numpy's and the standard
library's by their versions (:mod:`accy.frontend.jit_index`).
"""

from __future__ import annotations

import os
import struct
import sys
from types import BuiltinFunctionType, CodeType, FunctionType, ModuleType
from typing import Any

from accy.hashing import sha256

__all__ = ["KEYED_BY_VERSION", "MAX_ARRAY_BYTES", "MAX_TOTAL_BYTES", "UNKEYED_ATTRIBUTES",
           "UNKEYED_BUILTINS", "UNKEYED_NAMED", "UNKEYED_PREFIXES", "function_key", "value_key"]

#: the largest numpy array a key hashes (bytes); a larger one refuses the index
MAX_ARRAY_BYTES = 1 << 20
#: the most array bytes one key hashes in all (a list of many arrays is not cheap)
MAX_TOTAL_BYTES = 16 << 20
#: top-level modules whose objects are keyed by name (their code by source or version)
KEYED_BY_VERSION = frozenset({"accy", "accy_kernels", "numpy", "math", "cmath", "operator",
                              "builtins", "functools", "itertools"})
#: modules under those that read state no key covers (a fresh seed per process)
UNKEYED_PREFIXES = ("numpy.random",)
#: builtins that read what no key covers (other globals, attributes by a computed name,
#: files, per-process hashes and addresses): a function naming one is not keyed
UNKEYED_BUILTINS = frozenset({"__import__", "breakpoint", "compile", "delattr", "dir", "eval",
                              "exec", "getattr", "globals", "hasattr", "hash", "id", "input",
                              "locals", "open", "setattr", "vars"})
#: functions and classes of keyed modules that read what no key covers (files, the clock),
#: as (``__module__``, ``__qualname__``): wherever a function reaches one (a global, a
#: module attribute, a default, a closure cell), it is not keyed
UNKEYED_NAMED = frozenset({("builtins", n) for n in UNKEYED_BUILTINS} | {
    ("numpy", n) for n in ("load", "loadtxt", "genfromtxt", "fromfile", "fromregex",
                           "memmap", "datetime64")} | {
    ("numpy.lib.format", "open_memmap"), ("numpy.lib.npyio", "DataSource"),
    ("numpy.ctypeslib", "load_library")})
#: attribute names that reach what no key covers (a module's or a function's namespace as a
#: dict, frames, addresses): a function whose code names one is not keyed
UNKEYED_ATTRIBUTES = frozenset({"__dict__", "__globals__", "__builtins__", "__getattribute__",
                                "__array_interface__", "__array_struct__", "ctypes",
                                "f_globals", "f_locals", "f_builtins", "f_back", "tb_frame",
                                "gi_frame", "cr_frame", "ag_frame"})
# byte code that reads or writes what no key covers: imports, writes to globals
_REFUSED_OPS = frozenset({108, 97, 98})  # IMPORT_NAME, STORE_GLOBAL, DELETE_GLOBAL (3.11)
_MAX_ITEMS = 10_000  # values of more elements than this are not "cheap"


class _Refused(Exception):
    """Something read cannot be keyed."""


def _check_ops() -> None:
    import opcode

    want = {opcode.opmap[n] for n in ("IMPORT_NAME", "STORE_GLOBAL", "DELETE_GLOBAL")}
    if want != _REFUSED_OPS:  # pragma: no cover - another CPython's numbering
        raise _Refused("opcode numbering")


def _keyed_module(name: str | None) -> bool:
    return (bool(name) and name.split(".")[0] in KEYED_BY_VERSION
            and not name.startswith(UNKEYED_PREFIXES))


_SCALARS = (bool, int, float, complex, str, bytes)
_ROOTS: dict[str, str | None] = {}  # top-level keyed module -> its file or package folder


def _root(top: str) -> str | None:
    if top not in _ROOTS:
        file = getattr(sys.modules.get(top), "__file__", None)
        if file and os.path.basename(file) == "__init__.py":
            file = os.path.dirname(file)
        _ROOTS[top] = file
    return _ROOTS[top]


def _genuine_function(fn: FunctionType) -> bool:
    """Whether ``fn``, which claims a keyed module, was compiled from that package's files
    (``functools.wraps(anp.tanh)`` gives a user's function accy's ``__module__``)."""
    root = _root(fn.__module__.split(".")[0])
    path = fn.__code__.co_filename
    return root is not None and (path == root or path.startswith(root + os.sep))


def _genuine_named(owner: str, qualname: str, v: Any) -> bool:
    """Whether the class or builtin ``v`` is what ``owner``'s namespace holds under
    ``qualname`` (a user's class given ``__module__ = "numpy"`` is not)."""
    m = sys.modules.get(owner)
    if m is None:
        return False
    first, *rest = qualname.split(".")
    x = m.__dict__.get(first)  # not getattr: accy's lazy __getattr__ is slow
    for part in rest:
        x = getattr(x, part, None)
    return x is v


class _Encoder:
    """Appends a deterministic text encoding of values to ``out`` (raises ``_Refused``)."""

    def __init__(self) -> None:
        self.out: list[str] = []
        self.seen: dict[int, int] = {}  # id(function) -> its index (recursion, cycles)
        self.modules: set[tuple] = set()  # (module, names) whose attributes were encoded
        self.items = 0
        self.array_bytes = 0

    def add(self, *parts: str) -> None:
        self.items += len(parts)
        if self.items > _MAX_ITEMS:
            raise _Refused("too large")
        self.out.extend(parts)

    # values ------------------------------------------------------------------------
    def value(self, v: Any, names: frozenset[str] = frozenset()) -> None:
        t = type(v)
        if v is None or v is Ellipsis or t in _SCALARS:
            self.scalar(v, t)
        elif t in (tuple, list):
            self.add(t.__name__, str(len(v)))
            for x in v:
                self.value(x, names)
        elif t in (set, frozenset, dict):  # in iteration order: the order a trace sees
            self.add(t.__name__, str(len(v)))
            for x in v:
                self.value(x, names)
                if t is dict:
                    self.value(v[x], names)
        elif t is slice:
            self.add("slice")
            for x in (v.start, v.stop, v.step):
                self.value(x, names)
        elif t is FunctionType:
            self.function(v)
        elif t is ModuleType:
            self.module(v, names)
        elif t is CodeType:
            self.code(v)
        else:
            self.other(v, t, names)

    def scalar(self, v: Any, t: type) -> None:
        if t is int:  # hex: repr of an int over 4300 digits raises (sys.set_int_max_str_digits)
            self.add("int", hex(v))
        elif t is float or t is complex:  # the bits: repr gives "nan" for -nan and payloads
            parts = (v,) if t is float else (v.real, v.imag)
            self.add(t.__name__, struct.pack(f"<{len(parts)}d", *parts).hex())
        elif t in (str, bytes) and len(v) > 1024:  # a long one by its digest
            data = v.encode("utf-8", "surrogatepass") if t is str else v
            self.array_bytes += len(data)
            if self.array_bytes > MAX_TOTAL_BYTES:
                raise _Refused("too large")
            self.add(t.__name__, str(len(v)), sha256(data).hexdigest())
        else:
            self.add(t.__name__, repr(v))

    def other(self, v: Any, t: type, names: frozenset[str]) -> None:
        mod = getattr(t, "__module__", "") or ""
        np = sys.modules.get("numpy")
        # numpy's public functions are dispatchers (np.mean): by name, as builtins are
        if isinstance(v, type) or t is BuiltinFunctionType or (
                np is not None and t is type(np.mean) and t is not FunctionType):
            owner = getattr(v, "__module__", None) or ""
            if (not _keyed_module(owner) or (owner, v.__qualname__) in UNKEYED_NAMED
                    or not _genuine_named(owner, v.__qualname__, v)):
                raise _Refused(f"{owner}.{getattr(v, '__qualname__', '?')}")
            self.add("named", owner, v.__qualname__)
            return
        # an ndarray subclass (a masked array, a user's) carries state its bytes do not
        if np is not None and (t is np.ndarray or isinstance(v, np.generic)):
            self.array(np.asarray(v) if isinstance(v, np.generic) else v, t)
            return
        if np is not None and isinstance(v, np.dtype):  # repr: a structured one's fields
            self.add(t.__name__, repr(v))
            return
        if np is not None and isinstance(v, np.ufunc):  # numpy's own, by name (a
            # frompyfunc ufunc is named after its Python function: not keyed)
            if getattr(np, v.__name__, None) is not v:
                raise _Refused(f"ufunc {v.__name__}")
            self.add(t.__name__, v.__name__)
            return
        enum = sys.modules.get("enum")
        if (enum is not None and isinstance(v, enum.Enum) and _keyed_module(mod)
                and _genuine_named(mod, t.__qualname__, t)):
            self.add("enum", mod, t.__qualname__, v.name)
            self.value(v.value, names)
            return
        jitted = sys.modules.get("accy.frontend.jit")
        if jitted is not None and t is jitted.Jitted:
            self.add("jit", v.backend, v.name, repr(sorted(v.static_argnums)))
            self.function(v.fn)
            return
        if jitted is not None and t is jitted._Static:  # a static_argnums value
            self.add("static")
            self.value(v.key, names)
            return
        raise _Refused(f"{mod}.{t.__qualname__}")

    def array(self, a: Any, t: type) -> None:
        self.array_bytes += a.nbytes
        if (a.dtype.hasobject or a.nbytes > MAX_ARRAY_BYTES
                or self.array_bytes > MAX_TOTAL_BYTES):
            raise _Refused("array")
        h = sha256()
        h.update(memoryview(a.tobytes()))  # tobytes: C order, any layout
        # strides: a trace may read them (a C and a Fortran array of equal bytes)
        self.add(t.__name__, a.dtype.str, repr(a.dtype), repr(a.shape), repr(a.strides),
                 h.hexdigest())

    def module(self, m: ModuleType, names: frozenset[str]) -> None:
        if not _keyed_module(m.__name__) or sys.modules.get(m.__name__) is not m:
            raise _Refused(m.__name__)
        self.add("module", m.__name__)
        if (m.__name__, names) in self.modules:
            return
        self.modules.add((m.__name__, names))
        d = m.__dict__
        # attributes made on first use (numpy's submodules); accy's own lazy attributes are
        # its code, keyed by its source (and its __getattr__ suggests names: slow)
        lazy = "__getattr__" in d and m.__name__.split(".")[0] not in ("accy", "accy_kernels")
        for n in sorted(names):  # the attributes the code may read through it
            if n in d:
                self.add(n)
                self.value(d[n], names)
            elif lazy:
                try:
                    x = getattr(m, n)
                except Exception:  # noqa: BLE001 - not an attribute (a trace would fail too)
                    continue
                self.add(n)
                self.value(x, names)
        self.add("end-module")

    # functions ---------------------------------------------------------------------
    def function(self, fn: FunctionType) -> None:
        if _keyed_module(fn.__module__) and _genuine_function(fn):  # its code is keyed by
            # accy's source / a version
            if (fn.__module__, fn.__qualname__) in UNKEYED_NAMED:
                raise _Refused(f"{fn.__module__}.{fn.__qualname__}")
            self.add("named", fn.__module__, fn.__qualname__)
            self.cells(fn, frozenset())  # made at run time: what it closes over
            if "<locals>" in fn.__qualname__:  # a factory's: its defaults were made then too
                self.value(fn.__defaults__)
                self.value(fn.__kwdefaults__)
            return
        index = self.seen.get(id(fn))
        if index is not None:  # recursion: refer to the first encoding
            self.add("again", str(index))
            return
        index = self.seen[id(fn)] = len(self.seen)
        code = fn.__code__
        self.add("function", repr(fn.__module__), fn.__qualname__)
        self.source(code.co_filename)
        names = self.code(code)
        self.value(fn.__defaults__, names)  # with names: a module default's attributes
        self.value(fn.__kwdefaults__, names)
        self.add("attributes")  # f.scale = 2 read as f.scale in f (a helper's too)
        self.value(fn.__dict__, names)
        self.cells(fn, names)
        g = fn.__globals__
        if type(g) is not dict:  # a subclass's __missing__/__getitem__ feeds LOAD_GLOBAL
            raise _Refused("globals not a dict")
        builtins = fn.__builtins__  # what LOAD_GLOBAL falls back to (fixed at creation)
        for n in sorted(names):
            if n in g:
                self.add("global", n)
                self.value(g[n], names)
            elif n in builtins:
                if n in UNKEYED_BUILTINS:
                    raise _Refused(n)
                self.add("builtin", n)
                self.value(builtins[n], names)
        self.add("end-function", str(index))

    def cells(self, fn: FunctionType, names: frozenset[str]) -> None:
        for cell in fn.__closure__ or ():
            try:
                self.value(cell.cell_contents, names)
            except ValueError:  # an empty cell
                self.add("empty-cell")

    def source(self, path: str) -> None:
        try:
            st = os.stat(path)
        except (OSError, ValueError):
            self.add("no-source", path)
            return
        self.add("source", path, str(st.st_size), str(st.st_mtime_ns))

    def code(self, code: CodeType) -> frozenset[str]:
        """Encode ``code`` and its nested code objects; return all their ``co_names``."""
        names = set(code.co_names)
        if not UNKEYED_ATTRIBUTES.isdisjoint(names):
            raise _Refused("names a namespace, frame or address")
        raw = code.co_code
        if _REFUSED_OPS.intersection(raw[0::2]):  # 2-byte units; caches are opcode 0
            raise _Refused("imports or writes globals")
        self.add("code", raw.hex(), repr(code.co_names), repr(code.co_varnames),
                 repr(code.co_freevars), repr(code.co_cellvars), code.co_filename,
                 code.co_qualname, str(code.co_firstlineno), code.co_linetable.hex(),
                 code.co_exceptiontable.hex(),
                 repr((code.co_flags, code.co_argcount, code.co_posonlyargcount,
                       code.co_kwonlyargcount, code.co_nlocals, code.co_stacksize)))
        self.add("consts", str(len(code.co_consts)))
        for c in code.co_consts:
            if type(c) is CodeType:
                names |= self.code(c)
            else:
                self.value(c)
        return frozenset(names)


def _digest(parts: list[str]) -> str:
    # the parts' lengths follow them: no part (a qualname, a file name) can forge a
    # separator (map: C loops, a third of the key's time as a generator)
    text = "\x1f".join(parts) + "\x1e" + ",".join(map(str, map(len, parts)))
    return sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def function_key(fn: Any) -> str | None:
    """A sha256 hex digest of what tracing ``fn`` reads besides its arguments (see the
    module docstring), or ``None`` when something it reads cannot be keyed (not a plain
    Python function, a global bound to an object accy cannot hash, byte code that imports
    or assigns globals, more than ~10,000 values)."""
    if type(fn) is not FunctionType or sys.implementation.name != "cpython":
        return None
    enc = _Encoder()
    try:
        _check_ops()
        enc.function(fn)
    except (_Refused, RecursionError):
        return None
    return _digest(enc.out)


def value_key(value: Any) -> str | None:
    """A sha256 hex digest of ``value`` by the rules of :func:`function_key` (a jit
    signature: trees of array markers, shapes, dtypes and static values), or ``None``."""
    enc = _Encoder()
    try:
        enc.value(value)
    except (_Refused, RecursionError):
        return None
    return _digest(enc.out)
