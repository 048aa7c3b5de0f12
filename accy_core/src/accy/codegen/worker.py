"""LLVM code generation in a restartable child process (target-agnostic).

llvmlite is built with assertions: an LLVM bug aborts the whole process (``LLVM ERROR``,
``UNREACHABLE``). :func:`compile_llvm` therefore sends each request to a child process
(``python -m accy.codegen.worker``) over pipes. Messages are pickled dicts with an 8-byte
little-endian length prefix. If the child dies, the call raises
:class:`~accy.errors.CodegenError` with the tail of the child's stderr and the next call
starts a fresh child. One lock serialises callers, so threads share the worker safely.

``ACCY_CODEGEN_IN_PROCESS=1`` compiles in the calling process instead (faster start, no
protection; ``llvm.set_option`` strings then apply to the whole process).

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
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import IO, Any

from accy.errors import CodegenError

__all__ = ["OUTPUT_KINDS", "CodegenRequest", "compile_llvm", "shutdown_worker", "start_worker"]

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


_lock = threading.Lock()
_worker: _Worker | None = None


def shutdown_worker() -> None:
    """Stop the worker process if one is running (the next compile starts a new one)."""
    global _worker
    with _lock:
        if _worker is not None:
            _worker.close()
            _worker = None


def start_worker() -> None:
    """Start the worker process now, without waiting for it (no-op when one is running or
    compilation is in-process): its start-up (~0.1-0.3 s: Python and LLVM) then overlaps
    the caller's tracing and passes instead of delaying the first compile."""
    global _worker
    from accy import config

    if config.codegen_in_process():
        return
    with _lock:
        if _worker is None or _worker.proc.poll() is not None:
            _worker = _Worker()


atexit.register(shutdown_worker)  # no orphaned worker (or ResourceWarning) at interpreter exit


def compile_llvm(request: CodegenRequest) -> dict[str, bytes]:
    """Compile ``request`` in the worker process (or in-process, see module docs).

    Returns:
        ``{output kind: bytes}`` for each kind in ``request.outputs``.

    Raises:
        CodegenError: LLVM rejected the IR (message, LLVM text and an IR excerpt), or the
            worker died (its last stderr lines, e.g. ``LLVM ERROR: ...``).
    """
    global _worker
    from accy import config

    if config.codegen_in_process():
        return compile_here(request)
    with _lock:
        if _worker is None or _worker.proc.poll() is not None:
            _worker = _Worker()
        w = _worker
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
            _worker = None
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


if __name__ == "__main__":
    _serve()
