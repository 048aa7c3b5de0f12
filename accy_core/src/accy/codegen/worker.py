"""LLVM code generation in a restartable child process (target-agnostic).

llvmlite is built with assertions: an LLVM bug aborts the whole process (``LLVM ERROR``,
``UNREACHABLE``). :func:`compile_llvm` therefore sends each request to a child process
(``python -m accy.codegen.worker``) over pipes. Messages are pickled dicts with an 8-byte
little-endian length prefix. If the child dies, the call raises
:class:`~accy.errors.CodegenError` with the tail of the child's stderr and the next call
starts a fresh child. A lock per worker serialises its callers, so threads share workers
safely.

``ACCY_CODEGEN_IN_PROCESS=1`` compiles in the calling process instead (faster start, no
protection; ``llvm.set_option`` strings then apply to the whole process).

:func:`compile_llvm_many` compiles independent modules (the parts of one program) on up to
``ACCY_CODEGEN_WORKERS`` worker processes at once, each with its own lock; the object code
comes back to the caller, which loads it serially (one JIT engine is not thread-safe).

Output kinds: ``"obj"`` (object file bytes), ``"asm"`` (assembly text), ``"ptx"`` (assembly
text of an NVPTX target), ``"spirv-obj"`` (SPIR-V binary from ``emit_object``),
``"llvm-opt"`` (optimized LLVM IR text) and ``"llvm"`` (the parsed, verified input).
"""

from __future__ import annotations

import atexit
import os
import pickle
import re
import struct
import subprocess
import sys
import tempfile
import threading
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import IO, Any

from accy.errors import CodegenError

__all__ = ["OUTPUT_KINDS", "CodegenRequest", "compile_llvm", "compile_llvm_many", "shutdown_worker",
           "start_worker"]

OUTPUT_KINDS = frozenset({"obj", "asm", "ptx", "spirv-obj", "llvm-opt", "llvm"})
_PIPELINES = ("default", "light", "none")


@dataclass(frozen=True)
class CodegenRequest:
    """One compilation: LLVM IR text plus the target machine to build it for.

    Attributes:
        ir: LLVM IR module text.
        triple: target triple (written into the module).
        cpu: target CPU name (``""`` = generic; ``"sm_90"`` for NVPTX).
        features: target feature string (``"+avx2,+fma"``).
        opt_level: 0-3, the middle-end pipeline (``PassBuilder`` speed level) and codegen level.
        outputs: output kinds wanted (see :data:`OUTPUT_KINDS`); all come from one module.
        options: ``llvm.set_option`` strings (``"--spirv-ext=+SPV_EXT_shader_atomic_float_add"``).
        loop_vectorize, slp_vectorize: vectorizer switches at ``opt_level`` >= 2.
        reloc, code_model: target-machine relocation and code model.
        abort_for_testing: make the child abort (tests of the crash path only).
        link_libraries: paths of LLVM libraries, bitcode (``.bc``) or text (``.ll``), linked
            into the module before optimization (NVPTX: libdevice). Their definitions are
            made internal and a GlobalDCE pass drops every one the kernel does not call.
        pipeline: middle end: ``"default"`` (``PassBuilder`` at ``opt_level``), ``"light"``
            (always-inline, SROA, SCCP, SimplifyCFG, DCE: no InstCombine/GVN, which break
            Vulkan work-group arrays) or ``"none"``.
    """

    ir: str
    triple: str
    cpu: str = ""
    features: str = ""
    opt_level: int = 3
    outputs: tuple[str, ...] = ("obj",)
    options: tuple[str, ...] = ()
    loop_vectorize: bool = True
    slp_vectorize: bool = True
    reloc: str = "pic"
    code_model: str = "jitdefault"
    abort_for_testing: bool = False
    extra: dict[str, Any] = field(default_factory=dict)
    link_libraries: tuple[str, ...] = ()
    pipeline: str = "default"


# ---------------------------------------------------------------------- the compilation itself

_initialized = False


def _initialize(llvm: Any) -> None:
    global _initialized
    if not _initialized:
        llvm.initialize_all_targets()
        llvm.initialize_all_asmprinters()
        _initialized = True


def _excerpt(text: str, message: str, context: int = 3) -> str:
    m = re.search(r":(\d+):\d+:", message)
    lines = text.splitlines()
    if not m:
        return "\n".join(lines[:12])
    n = int(m.group(1))
    lo, hi = max(n - 1 - context, 0), min(n + context, len(lines))
    return "\n".join(f"{i + 1:5d}  {lines[i]}" for i in range(lo, hi))


def _link_libraries(llvm: Any, module: Any, tm: Any, request: CodegenRequest) -> None:
    """Link each library, internalize its definitions, then drop the unused ones (GlobalDCE)."""
    for path in request.link_libraries:
        try:
            data = Path(path).read_bytes()
            lib = (
                llvm.parse_assembly(data.decode())
                if path.endswith(".ll")
                else (llvm.parse_bitcode(data))
            )
        except (OSError, RuntimeError, UnicodeDecodeError) as e:
            raise CodegenError(f"codegen: cannot read library {path!r}: {e}") from None
        defined = {f.name for f in lib.functions if not f.is_declaration}
        lib.triple, lib.data_layout = module.triple, module.data_layout
        module.link_in(lib)
        for f in module.functions:
            if f.name in defined and not f.is_declaration:
                f.linkage = "internal"
    pb = llvm.create_pass_builder(tm, llvm.create_pipeline_tuning_options(speed_level=0))
    mpm = llvm.create_new_module_pass_manager()
    mpm.add_global_dead_code_eliminate_pass()
    mpm.run(module, pb)


def _light_pipeline(llvm: Any, module: Any, tm: Any) -> None:
    """Run the ``light`` middle end (see :class:`CodegenRequest`)."""
    pb = llvm.create_pass_builder(tm, llvm.create_pipeline_tuning_options(speed_level=2))
    mpm = llvm.create_new_module_pass_manager()
    mpm.add_always_inliner_pass()
    mpm.add_sroa_pass()
    mpm.add_sccp_pass()
    mpm.add_simplify_cfg_pass()
    mpm.add_dead_code_elimination_pass()
    mpm.run(module, pb)


def _middle_end(llvm: Any, module: Any, tm: Any, request: CodegenRequest) -> None:
    """Run the request's middle-end ``pipeline`` on ``module``."""
    if request.pipeline == "light":
        _light_pipeline(llvm, module, tm)
    elif request.pipeline == "default":
        pto = llvm.create_pipeline_tuning_options(speed_level=request.opt_level)
        pto.loop_vectorization = request.loop_vectorize and request.opt_level >= 2
        pto.slp_vectorization = request.slp_vectorize and request.opt_level >= 2
        pb = llvm.create_pass_builder(tm, pto)
        pb.getModulePassManager().run(module, pb)


_applied_options: set[str] = set()


def _apply_options(llvm: Any, options: tuple[str, ...]) -> None:
    """Apply ``llvm.set_option`` strings, each once per process (they are process-global)."""
    for option in options:
        if option not in _applied_options:
            llvm.set_option("", option)
            _applied_options.add(option)


def compile_here(request: CodegenRequest) -> dict[str, bytes]:
    """Compile ``request`` in this process and return ``{output kind: bytes}``.

    Raises:
        CodegenError: LLVM rejects the IR (parse or verify) or an unknown output kind.
    """
    import llvmlite.binding as llvm

    _initialize(llvm)
    unknown = set(request.outputs) - OUTPUT_KINDS
    if unknown:
        raise CodegenError(
            f"codegen: unknown output kind(s) {sorted(unknown)}; known: "
            f"{', '.join(sorted(OUTPUT_KINDS))}"
        )
    if request.pipeline not in _PIPELINES:
        raise CodegenError(
            f"codegen: unknown pipeline {request.pipeline!r}; known: {', '.join(_PIPELINES)}"
        )
    _apply_options(llvm, request.options)
    try:
        module = llvm.parse_assembly(request.ir)
        module.verify()
    except RuntimeError as e:
        msg = str(e).strip()
        lines = msg.splitlines() or [""]
        first = next((ln for ln in lines if "error:" in ln), lines[0])
        raise CodegenError(
            f"codegen: LLVM rejected the generated IR: {first.strip()}",
            llvm_message=msg,
            ir_excerpt=_excerpt(request.ir, msg),
        ) from None
    target = llvm.Target.from_triple(request.triple)
    tm = target.create_target_machine(
        cpu=request.cpu,
        features=request.features,
        opt=request.opt_level,
        reloc=request.reloc,
        codemodel=request.code_model,
    )
    module.triple = request.triple
    if not module.data_layout:
        module.data_layout = str(tm.target_data)
    out: dict[str, bytes] = {}
    if "llvm" in request.outputs:
        out["llvm"] = str(module).encode()
    if request.link_libraries:
        _link_libraries(llvm, module, tm, request)
    _middle_end(llvm, module, tm, request)
    for kind in request.outputs:
        if kind == "llvm-opt":
            out[kind] = str(module).encode()
        elif kind in ("asm", "ptx"):
            out[kind] = tm.emit_assembly(module).encode()
        elif kind in ("obj", "spirv-obj"):
            out[kind] = tm.emit_object(module)
    return out


# ------------------------------------------------------------------------------ the protocol


def _write_message(stream: IO[bytes], obj: object) -> None:
    data = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(struct.pack("<Q", len(data)) + data)
    stream.flush()


def _read_message(stream: IO[bytes]) -> object | None:
    head = stream.read(8)
    if len(head) < 8:
        return None
    (n,) = struct.unpack("<Q", head)
    data = stream.read(n)
    if len(data) < n:
        return None
    return pickle.loads(data)


def _serve() -> None:
    """Child main loop: answer requests until stdin closes.

    LLVM is loaded and initialized before the first request arrives, so a worker started
    ahead of time (:func:`start_worker`) has paid its start-up by then.
    """
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    sys.stdout = sys.stderr  # stray prints must not corrupt the protocol
    import llvmlite.binding as llvm

    _initialize(llvm)
    while True:
        message = _read_message(stdin)
        if message is None:
            return
        request = CodegenRequest(**message)  # type: ignore[arg-type]
        if request.abort_for_testing:
            sys.stderr.write("LLVM ERROR: deliberate abort requested by a test\n")
            sys.stderr.flush()
            os.abort()
        try:
            reply: dict[str, Any] = {"ok": True, "outputs": compile_here(request)}
        except CodegenError as e:
            reply = {"ok": False, "error": e}
        except Exception as e:  # noqa: BLE001 - report anything else to the parent
            reply = {"ok": False, "error": CodegenError(f"codegen worker: {type(e).__name__}: {e}")}
        _write_message(stdout, reply)


# The child imports this file without running ``accy/__init__.py`` (which loads numpy and the
# IR: ~0.3 s of the worker's start-up): empty package modules stand in for ``accy`` and
# ``accy.codegen``, so only ``accy.errors`` (standard library only) and llvmlite are loaded.
_BOOTSTRAP = """\
import runpy, sys, types
for name, path in (("accy", {pkg!r}), ("accy.codegen", {codegen!r})):
    module = types.ModuleType(name)
    module.__path__ = [path]
    sys.modules[name] = module
runpy.run_module("accy.codegen.worker", run_name="__main__")
"""


class _Worker:
    def __init__(self) -> None:
        self.stderr = tempfile.TemporaryFile()  # noqa: SIM115 - closed in close()
        env = dict(os.environ)
        here = Path(__file__).resolve().parent
        src = str(here.parents[1])
        env["PYTHONPATH"] = os.pathsep.join(p for p in (src, env.get("PYTHONPATH")) if p)
        boot = _BOOTSTRAP.format(pkg=str(here.parent), codegen=str(here))
        self.proc = subprocess.Popen(
            [sys.executable, "-c", boot],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.stderr,
            env=env,
        )

    def stderr_tail(self, lines: int = 12) -> str:
        self.stderr.seek(0)
        text = self.stderr.read().decode(errors="replace")
        return "\n".join(text.strip().splitlines()[-lines:])

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        for stream in (self.proc.stdin, self.proc.stdout):
            if stream is not None:
                stream.close()
        self.stderr.close()


class _Slot:
    """One worker process (started on first use, replaced after a crash) and its lock."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.worker: _Worker | None = None

    def live_worker(self) -> _Worker:
        """The slot's running worker, started when there is none (call with ``lock`` held)."""
        if self.worker is None or self.worker.proc.poll() is not None:
            self.worker = _Worker()
        return self.worker

    def close(self) -> None:
        with self.lock:
            if self.worker is not None:
                self.worker.close()
                self.worker = None


_slots_lock = threading.Lock()
_slots: list[_Slot] = []


def _slot(index: int) -> _Slot:
    """Worker slot ``index`` (0: the one every single request uses), created on demand."""
    with _slots_lock:
        while len(_slots) <= index:
            _slots.append(_Slot())
        return _slots[index]


def shutdown_worker() -> None:
    """Stop every worker process that is running (the next compile starts new ones)."""
    with _slots_lock:
        slots = list(_slots)
    for slot in slots:
        slot.close()


def start_worker() -> None:
    """Start the first worker process now, without waiting for it (no-op when one is running
    or compilation is in-process): its start-up (~0.1-0.3 s: Python and LLVM) then overlaps
    the caller's tracing and passes instead of delaying the first compile. Further workers
    (:func:`compile_llvm_many`) start only when a program has modules for them."""
    from accy import config

    if config.codegen_in_process():
        return
    slot = _slot(0)
    with slot.lock:
        slot.live_worker()


atexit.register(shutdown_worker)  # no orphaned worker (or ResourceWarning) at interpreter exit


def _compile_on(slot: _Slot, request: CodegenRequest) -> dict[str, bytes]:
    """Send ``request`` to ``slot``'s worker and return its outputs (see :func:`compile_llvm`)."""
    with slot.lock:
        w = slot.live_worker()
        try:
            assert w.proc.stdin is not None and w.proc.stdout is not None
            _write_message(w.proc.stdin, asdict(request))
            reply = _read_message(w.proc.stdout)
        except (BrokenPipeError, OSError):
            reply = None
        if reply is None:
            w.proc.wait()
            tail = w.stderr_tail()
            code = w.proc.returncode
            w.close()
            slot.worker = None
            raise CodegenError(
                f"codegen worker died (exit code {code}) while compiling for "
                f"{request.triple!r}; LLVM said:\n{tail or '(no output)'}",
                llvm_message=tail,
                ir_excerpt=request.ir[:2000],
                crashed=True,
            )
    assert isinstance(reply, dict)
    if not reply["ok"]:
        raise reply["error"]
    return reply["outputs"]


def compile_llvm(request: CodegenRequest) -> dict[str, bytes]:
    """Compile ``request`` in the worker process (or in-process, see module docs).

    Returns:
        ``{output kind: bytes}`` for each kind in ``request.outputs``.

    Raises:
        CodegenError: LLVM rejected the IR (message, LLVM text and an IR excerpt), or the
            worker died (its last stderr lines, e.g. ``LLVM ERROR: ...``).
    """
    from accy import config

    if config.codegen_in_process():
        return compile_here(request)
    return _compile_on(_slot(0), request)


def compile_llvm_many(requests: Sequence[CodegenRequest],
                      workers: int | None = None) -> list[dict[str, bytes]]:
    """Compile independent ``requests`` in parallel over several worker processes.

    The calling thread feeds the first worker (the warm one); one helper thread per further
    worker starts that worker and takes requests from the same queue, so a worker that is
    still starting up delays nothing: the others take its share. Put the largest requests
    first. The results are those of :func:`compile_llvm` on each request, in order.

    Args:
        requests: the requests (independent modules).
        workers: worker processes to use (default ``ACCY_CODEGEN_WORKERS``); at most one per
            request; 1, or ``ACCY_CODEGEN_IN_PROCESS``, compiles them one after another.

    Raises:
        CodegenError: as :func:`compile_llvm`, for the first failed request (by position);
            the requests queued behind a failure are not compiled, and a crashed worker is
            replaced on the next call.
    """
    from accy import config

    n = min(len(requests), workers if workers is not None else config.codegen_workers())
    if n <= 1 or config.codegen_in_process():
        return [compile_llvm(r) for r in requests]
    pending = list(enumerate(requests))
    pending.reverse()  # pop() from the end takes them in the given order
    results: list[dict[str, bytes] | None] = [None] * len(requests)
    errors: list[tuple[int, BaseException]] = []
    queue_lock = threading.Lock()

    def drain(index: int) -> None:
        slot = _slot(index)
        while True:
            with queue_lock:
                if errors or not pending:
                    return
                position, request = pending.pop()
            try:
                results[position] = _compile_on(slot, request)
            except BaseException as e:  # noqa: BLE001 - re-raised by the caller below
                with queue_lock:
                    errors.append((position, e))
                return

    helpers = [threading.Thread(target=drain, args=(i,), name=f"accy-codegen-{i}", daemon=True)
               for i in range(1, n)]
    for t in helpers:
        t.start()
    drain(0)
    for t in helpers:
        t.join()
    if errors:
        raise min(errors, key=lambda e: e[0])[1]
    return [r for r in results if r is not None]


if __name__ == "__main__":
    _serve()
