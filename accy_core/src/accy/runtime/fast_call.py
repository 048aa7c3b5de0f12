"""The small-call fast path of an :class:`~accy.runtime.Executable` on host-memory backends.

A call of a few hundred elements is all Python overhead (the kernel itself takes about a
microsecond), so this path does, per call, only what cannot be done once: compare each
argument's type, dtype, shape and layout with the parameter's, take its address, allocate
the fresh result arrays, write the addresses into launch argument arrays packed when the
plan was built (backend ``bind_launch``: geometry and scalars validated and packed once,
temporaries and constants bound to their persistent buffers) and call each kernel.

Any call the plan does not cover returns ``None`` and takes the ordinary path, which
raises the same errors as always (wrong count, dtype, shape: :class:`~accy.errors.InputError`).

Thread safety and lifetime: the pointer arrays are shared by every call of the plan, so the
generated call fills and launches them holding the executable's lock (calls of one
executable run one at a time, as on the ordinary path), and a plan whose executable was
closed (its persistent buffers freed) is marked dead under that lock and refuses every
later call (``None``). ``accy.jit`` calls :attr:`FastCall.call` directly.

Loop nodes: where the backend runs a loop node natively (the CPU's loop driver,
``backend.bind_loop``), the plan binds the driver once (``bind_call``: its own slot table,
the persistent buffers of the loop's temporaries, double buffers and constants written
into it, the checks of a native run done once) and a call writes the parameters' and
fresh outputs' addresses into the table and runs the whole loop like one more launch.
Programs with index checks, zero-initialised results, empty tensors, a kernel that writes
into a parameter buffer (which could alias another argument) or a loop the backend does not
run natively have no plan.
"""

from __future__ import annotations

import ctypes
import sys
from collections.abc import Sequence
from typing import Any

import numpy as np

from accy.backend import Geometry

__all__ = ["FastCall", "array_address", "build_fast_call", "call_source", "compiled_source",
           "no_fast_call"]

_ndarray = np.ndarray
_empty = np.empty
_addressof = ctypes.addressof
_from_buffer = ctypes.c_char.from_buffer
_void_at = ctypes.c_void_p.from_address


def _data_offset() -> int | None:
    """Where an ndarray object holds its data pointer, relative to ``id(array)``: right
    after the object header in numpy's ``PyArrayObject`` (16 bytes on 64-bit CPython).
    Reading it there costs about half of ``ctypes.c_char.from_buffer`` (which exports a
    buffer) and works for read-only arrays too. Checked on probe arrays (a view with an
    offset, a read-only one); ``None`` (use the buffer protocol) where it does not hold,
    e.g. an interpreter whose ``id`` is not the object's address."""
    if sys.implementation.name != "cpython":
        return None
    offset = 2 * ctypes.sizeof(ctypes.c_void_p)
    base = np.arange(8, dtype=np.float32)
    probes = (base, base[3:], np.frombuffer(b"abcdefgh", np.uint8))
    try:
        if all(_void_at(id(a) + offset).value == a.__array_interface__["data"][0]
               for a in probes):
            return offset
    except (ValueError, OSError):  # pragma: no cover - defensive
        pass
    return None  # pragma: no cover


_OFFSET = _data_offset()


def _address(a: np.ndarray) -> int:
    """The address of ndarray ``a``'s first byte (see :func:`_data_offset`)."""
    if _OFFSET is not None and isinstance(a, _ndarray):
        return _void_at(id(a) + _OFFSET).value or 0
    try:
        return _addressof(_from_buffer(a))
    except (TypeError, ValueError, BufferError):
        return a.__array_interface__["data"][0]


#: the public name of :func:`_address` (backends read their buffers' addresses with it)
array_address = _address


class FastCall:
    """A prepared call: ``plan(args)`` returns the results, or ``None`` when ``args`` do
    not match the parameters exactly (the caller then takes the ordinary path).

    ``call`` is the same function generated for this plan (:func:`call_source`): every
    parameter, output and launch unrolled, their dtypes, shapes, pointer arrays and launch
    callables bound as globals — no loop, tuple unpacking or list per call (~1 us of the
    ~4 us a 256-element call costs). ``code`` is the compiled code of that source as
    :func:`compiled_source` stored it (Python version, source, ``marshal`` bytes): used when
    its source is exactly this plan's, so a warm process compiles nothing."""

    def __init__(self, params: list[tuple[np.dtype, tuple[int, ...]]],
                 outputs: list[tuple[np.dtype, tuple[int, ...]]],
                 launches: list[tuple[Any, Any, list[tuple[int, int]]]],
                 results: list[tuple[str, Any]], lock: Any, code: tuple = ()) -> None:
        # (dtype, shape, C-contiguous strides) per parameter: comparing strides is cheaper
        # than reading ``flags`` (both refuse a transposed or sliced view)
        self.params = [(d, s, _strides(d, s)) for d, s in params]
        self.outputs = outputs
        self.launches = launches
        self.results = results
        self.plain = _plain(results)
        self.count = len(params)
        self.lock = lock
        self.dead = False  # set (under ``lock``) when the executable is closed
        self.call = _specialise(self, code)

    def kill(self) -> None:
        """Refuse every later call (the executable's buffers are about to be freed); the
        caller holds ``lock``."""
        self.dead = True

    def __call__(self, args: Sequence[Any]) -> tuple[np.ndarray, ...] | None:
        return self.call(args)

    def finish(self, args: Sequence[Any], outs: list[np.ndarray]) -> tuple[Any, ...]:
        """The call's results from its fresh ``outs`` (copies of parameters, constants)."""
        return tuple(_result(kind, ref, args, outs) for kind, ref in self.results)


def _plain(results: list[tuple[str, Any]]) -> bool:
    return [k for k, _ in results] == ["out"] * len(results)


def call_source(count: int, n_outputs: int, binds: list[list[tuple[int, int]]],
                plain: bool) -> str:
    """The source of ``call(args)`` for a plan of ``count`` parameters, ``n_outputs`` fresh
    outputs and launches binding ``binds[k]`` (pointer position, source: parameters, then
    outputs): the generic loop of checks, addresses, output allocations and launches
    written out. Its globals are bound by :func:`_specialise`."""
    lines = ["def call(args):", f"    if len(args) != {count}:", "        return None"]
    if count:
        names = ", ".join(f"a{i}" for i in range(count))
        lines.append(f"    {names}, = args")
    for i in range(count):
        # builtin dtypes are singletons: the identity test spares most calls the comparison
        lines += [f"    if (type(a{i}) is not _ndarray or a{i}.dtype is not d{i} and a{i}.dtype"
                  f" != d{i} or a{i}.shape != s{i} or a{i}.strides != t{i}):",
                  "        return None"]
    for i in range(count):  # after every check: nothing is taken from a refused call
        if _OFFSET is not None:  # the ndarray's own data pointer (exact ndarrays only)
            lines.append(f"    p{i} = _void_at(_id(a{i}) + OFF).value")
        else:
            lines += ["    try:", f"        p{i} = _addressof(_from_buffer(a{i}))",
                      "    except (TypeError, ValueError, BufferError):",
                      f"        p{i} = _address(a{i})"]
    for j in range(n_outputs):
        lines.append(f"    o{j} = _empty(os{j}, od{j})")
        lines.append(f"    q{j} = _void_at(_id(o{j}) + OFF).value" if _OFFSET is not None
                     else f"    q{j} = _addressof(_from_buffer(o{j}))")
    sources = [f"p{i}" for i in range(count)] + [f"q{j}" for j in range(n_outputs)]
    # a contended lock sends the call to the ordinary path, which waits for it
    lines += ["    if not _acquire(False):", "        return None", "    try:",
              "        if _plan.dead:", "            return None"]
    for k, launch_binds in enumerate(binds):
        lines += [f"        P{k}[{position}] = {sources[source]}"
                  for position, source in launch_binds]
        lines.append(f"        R{k}()")
    lines += ["    finally:", "        _release()"]
    outs = "".join(f"o{j}, " for j in range(n_outputs))
    lines.append(f"    return ({outs})" if plain else f"    return _finish(args, [{outs}])")
    return "\n".join(lines)


_CODE: dict[str, Any] = {}  # source -> code object, in this process (a few hundred at most)


def _code(source: str, stored: tuple) -> Any:
    """The code object of ``source``: ``stored``'s when it is for this Python and exactly
    this source (a cached graph's), else compiled (and remembered)."""
    code = _CODE.get(source)
    if code is None:
        if len(stored) == 3 and stored[0] == sys.version and stored[1] == source:
            import marshal

            try:
                code = marshal.loads(stored[2])
            except (ValueError, EOFError, TypeError):  # not what compiled_source wrote
                code = None
            if type(code) is not type(_code.__code__):
                code = None
        if code is None:
            code = compile(source, "<accy fast call>", "exec")
        if len(_CODE) < 512:
            _CODE[source] = code
    return code


def _specialise(plan: FastCall, stored: tuple = ()) -> Any:
    """``call(args)`` for ``plan``: :func:`call_source`'s code with this plan's dtypes,
    shapes, pointer arrays and launch callables as its globals."""
    env: dict[str, Any] = {"_ndarray": _ndarray, "_empty": _empty, "_addressof": _addressof,
                           "_from_buffer": _from_buffer, "_address": _address,
                           "_finish": plan.finish, "_plan": plan, "_id": id,
                           "_void_at": _void_at, "OFF": _OFFSET,
                           "_acquire": plan.lock.acquire, "_release": plan.lock.release}
    for i, (dtype, shape, strides) in enumerate(plan.params):
        env[f"d{i}"], env[f"s{i}"], env[f"t{i}"] = dtype, shape, strides
    for j, (dtype, shape) in enumerate(plan.outputs):
        env[f"od{j}"], env[f"os{j}"] = dtype, shape
    for k, (pointers, run, _) in enumerate(plan.launches):
        env[f"P{k}"], env[f"R{k}"] = pointers, run
    source = call_source(plan.count, len(plan.outputs), [b for _, _, b in plan.launches],
                         plan.plain)
    exec(_code(source, stored), env)  # noqa: S102 (our code)
    return env["call"]


def _strides(dtype: np.dtype, shape: tuple[int, ...]) -> tuple[int, ...]:
    """The strides numpy gives a fresh C-ordered array (other layouts take the slow path)."""
    return np.empty(shape, dtype).strides


def _result(kind: str, ref: Any, args: Sequence[np.ndarray], outs: list[np.ndarray]) -> Any:
    if kind == "out":
        return outs[ref]
    if kind == "out-copy":
        return outs[ref].copy()
    if kind == "param":
        return args[ref].copy()
    return ref.copy()  # a constant


def _layout(g: Any, flat_of: Any = None) -> tuple | None:
    """What a plan of launch graph ``g`` binds, from the graph alone: (outputs, results,
    steps), in run order, each step ``(launch or loop node, binds, fixed)`` with ``binds``
    (position, parameter or output index) and ``fixed``: for a launch (position, slot of a
    temporary or constant), for a loop node (table entry, origin kind, slot) of the
    origins no call binds (see :mod:`accy.runtime.loop_plan`); a loop's positions are the
    entries of its slot table, ``flat_of(node)`` its :class:`~accy.runtime.loop_plan.FlatLoop`
    (default: flattened here). ``None`` when the graph has no plan (module docstring)."""
    if g.checks or g.zero_results:
        return None
    written = g.written_slots
    if any(s in written for s in g.param_slots):
        return None
    if any(0 in t.shape for t in (*g.param_types, *g.result_types)):
        return None
    live: dict[int, int] = {s: i for i, s in enumerate(g.param_slots)}
    outputs: list[tuple[np.dtype, tuple[int, ...]]] = []
    results: list[tuple[str, Any]] = []
    for slot, t in zip(g.result_slots, g.result_types, strict=True):
        if slot in written:
            if slot in live:
                results.append(("out-copy", live[slot] - len(g.param_slots)))
                continue
            live[slot] = len(g.param_slots) + len(outputs)
            results.append(("out", len(outputs)))
            outputs.append((np.dtype(t.dtype.numpy), tuple(t.shape)))
        elif slot in g.param_slots:
            results.append(("param", g.param_slots.index(slot)))
        else:
            results.append(("const", g.constants[slot].reshape(t.shape)))
    steps = []
    for node in _nodes(g):
        if hasattr(node, "kernel") and node.groups <= 0:
            continue  # an empty launch
        step = _step(g, node, live, flat_of)
        if step is None:
            return None
        steps.append(step)
    return outputs, results, steps


def _step(g: Any, node: Any, live: dict[int, int], flat_of: Any) -> tuple | None:
    """``(node, binds, fixed)`` of one launch or loop node (see :func:`_layout`)."""
    binds, fixed = [], []
    if hasattr(node, "kernel"):  # a launch
        for position, slot in enumerate(node.slots):
            if slot in live:
                binds.append((position, live[slot]))
            else:
                fixed.append((position, slot))
        return node, binds, fixed
    flat = _flat(g, node) if flat_of is None else flat_of(node)
    if flat is None:
        return None
    for entry, kind, slot in flat.origins:
        if kind == "buffer" and slot in live:
            binds.append((entry, live[slot]))
        else:
            fixed.append((entry, kind, slot))
    return node, binds, fixed


def _nodes(g: Any) -> list[Any]:
    """``g``'s launches and loop nodes in run order (its launches when it has no loops)."""
    if not g.loops:
        return list(g.launches)
    from accy.runtime.graph import graph_nodes

    return graph_nodes(g)


def _flat(g: Any, node: Any) -> Any:
    from accy.runtime.loop_plan import flatten_loop

    return flatten_loop(node, len(g.slot_bytes), node.name)


def _bind_loop(exe: Any, node: Any, binds: list[tuple[int, int]], fixed: list[tuple],
               sizes: list[int], held: list[Any]) -> tuple[Any, Any] | None:
    """``(table, run)`` of loop ``node``'s native driver bound for a plan (``sizes``: bytes
    of each parameter and output; the persistent buffers it binds join ``held``), or None:
    no native driver (the backend has none, or the loop does not fit it), or a launch of
    the loop writes a buffer bound to a parameter (which may alias another argument)."""
    driver = exe.native_loop(node)
    if driver is None or not hasattr(driver, "bind_call"):
        return None
    flat, n_params = driver.flat, len(exe.graph.param_slots)
    given = {entry: source for entry, source in binds}
    params = {i for i, (entry, _, _) in enumerate(flat.origins)
              if given.get(entry, n_params) < n_params}
    pairs = flat.pairs if flat.pairs is not None else ()
    if any(int(i) in params and int(j) in params for i, j in pairs):
        return None
    resolve = {"buffer": lambda s: exe.buffer(s, {}), "own": exe.own, "spare": exe.spare}
    where = {entry: (kind, slot) for entry, kind, slot in fixed}
    buffers = []
    for entry, _, _ in flat.origins:
        if entry in given:
            buffers.append(sizes[given[entry]])
        else:
            kind, slot = where[entry]
            buffers.append(resolve[kind](slot))
            held.append(buffers[-1])
    return driver.bind_call(buffers)


def compiled_source(g: Any) -> tuple:
    """The code of launch graph ``g``'s small-call function, to store with the graph
    (:attr:`~accy.runtime.graph.LaunchGraph.fast_code`): (``sys.version``, source,
    ``marshal`` bytes), or ``()`` when it has no fast path."""
    layout = _layout(g)
    if layout is None:
        return ()
    import marshal

    outputs, results, steps = layout
    source = call_source(len(g.param_slots), len(outputs), [b for _, b, _ in steps],
                         _plain(results))
    return sys.version, source, marshal.dumps(compile(source, "<accy fast call>", "exec"))


def build_fast_call(exe: Any) -> FastCall | None:
    """The :class:`FastCall` of executable ``exe``, or ``None`` when it has none (see the
    module docstring). Loaded kernels and persistent buffers (constants, the default
    workspace's temporaries) are bound now: rebuild after ``exe.close()``."""
    g, be = exe.graph, exe.backend
    if not exe._host or not hasattr(be, "bind_launch"):
        return None
    layout = _layout(g, lambda node: getattr(exe.native_loop(node), "flat", None))
    if layout is None:
        return None
    outputs, results, planned = layout
    sizes = [t.num_elements * np.dtype(t.dtype.numpy).itemsize for t in g.param_types]
    sizes += [int(np.prod(shape)) * dtype.itemsize for dtype, shape in outputs]
    launches, held = [], []
    for item, binds, fixed in planned:
        if not hasattr(item, "kernel"):  # a loop node: its native driver, bound
            got = _bind_loop(exe, item, binds, fixed, sizes, held)
            if got is None:
                return None
            launches.append((*got, binds))
            continue
        pointers, run = be.bind_launch(exe._kernel(item.kernel),
                                       Geometry(item.groups, item.workgroup_size),
                                       list(item.scalars))
        for position, slot in fixed:  # a temporary or constant: its persistent buffer
            buf = exe.buffer(slot, {})
            pointers[position] = buf.ctypes.data
            held.append(buf)
        launches.append((pointers, run, binds))
    plan = FastCall([(np.dtype(t.dtype.numpy), tuple(t.shape)) for t in g.param_types],
                    outputs, launches, results, exe._lock, getattr(g, "fast_code", ()))
    # the buffers its pointer arrays hold the addresses of: a plan kept after its executable
    # was collected (whose finalizer frees them) still points into live memory, and its
    # launches raise LaunchError (the executable's kernels were destroyed)
    plan.held = held
    return plan


def no_fast_call(args: Sequence[Any]) -> None:
    """The ``call`` of an executable without a fast path: every call takes the ordinary
    path."""
    return None
