"""CudaTarget: LLVM's NVPTX target as a :class:`~accy.codegen.TargetDescription`.

Pure: no device, no driver, no llvmlite import. The shared generator runs in SIMT mode; this
class supplies the NVPTX idioms checked in ``LLVM-TARGETS.md``:

- entry ``define ptx_kernel void @k(ptr addrspace(1) %b0, ..., i32 %s0, ...)`` with
  ``"nvvm.maxntid"`` = the work-group size (PTX ``.maxntid``);
- ids from ``llvm.nvvm.read.ptx.sreg.{tid,ctaid,nctaid}.x``; global = ctaid * size + tid;
- barrier ``llvm.nvvm.barrier.cta.sync.aligned.all(0)`` (``bar.sync 0``);
- shared arrays as ``internal addrspace(3)`` globals;
- atomics ``atomicrmw ... syncscope("device") monotonic`` (``atom.global.*``, float add
  native, float min/max as a CAS loop);
- math: ``llvm.{sqrt,floor,ceil,fabs}`` natively; other transcendentals call libdevice's
  ``__nv_*`` functions when libdevice was found, else (f32 only) the approximations of
  ``_data/fastmath.ll`` (PTX ``ex2/lg2/sin/cos.approx``). Both libraries are linked by the
  code generator worker, internalized and dead-stripped (``CodegenRequest.link_libraries``).

SM and PTX ISA: the SM comes from the device, or the caller when compiling ahead of time;
the PTX ISA is the highest that both LLVM and the driver accept, at least the SM's minimum
(PTX ISA reference, "Release Notes" table of targets per ISA version).
"""

from __future__ import annotations

from pathlib import Path

from accy.codegen import BaseTarget
from accy.codegen.target import global_buffer_params
from accy.errors import CapabilityError
from accy.kernel import ir

__all__ = [
    "LLVM_MAX_PTX_ISA",
    "NVPTX64_DATA_LAYOUT",
    "CudaTarget",
    "FASTMATH_LIBRARY",
    "min_ptx_isa",
    "parse_sm",
]

#: what LLVM 22 prints for ``nvptx64-nvidia-cuda`` (checked against llvmlite in the tests)
NVPTX64_DATA_LAYOUT = "e-p6:32:32-i64:64-i128:128-i256:256-v16:16-v32:32-n16:32:64"
#: highest ``+ptxNN`` feature LLVM 22 knows (x10: 90 = PTX ISA 9.0)
LLVM_MAX_PTX_ISA = 90
#: the f32 approximation library linked when there is no libdevice
FASTMATH_LIBRARY = str(Path(__file__).parent / "_data" / "fastmath.ll")

# lowest PTX ISA (x10) that can target each SM (PTX ISA manual, release notes)
_SM_MIN_ISA = {60: 50, 70: 60, 75: 63, 80: 70, 86: 71, 87: 74, 89: 78, 90: 78, 100: 86,
               101: 86, 103: 88, 120: 87}
_DEFAULT_ISA = 80  # what the probe validated with ptxas on sm_90
_NATIVE = {"sqrt", "floor", "ceil"}
_LIBDEVICE = {"exp", "log", "sin", "cos", "tanh", "exp2", "log2", "pow"}
_MAX_THREADS = 1024
_MAX_STATIC_SHARED_BYTES = 48 * 1024


def parse_sm(text: str | int) -> int:
    """Return the SM number of ``"sm_90"``, ``"90"``, ``"9.0"`` or ``90``.

    Raises:
        CapabilityError: not an SM this backend knows.
    """
    s = str(text).strip().lower().removeprefix("sm_").removeprefix("compute_")
    sm = int(s.replace(".", "")) if s.replace(".", "").isdigit() else -1
    if sm not in _SM_MIN_ISA:
        known = ", ".join(f"sm_{k}" for k in sorted(_SM_MIN_ISA))
        raise CapabilityError(
            f"cuda target {text!r} is not a known SM; known: {known}",
            feature="target", backend="cuda",
        )
    return sm


def min_ptx_isa(sm: int) -> int:
    """Return the lowest PTX ISA (x10) that targets ``sm``."""
    return _SM_MIN_ISA[sm]


class CudaTarget(BaseTarget):
    """The NVPTX target description for one SM.

    Args:
        sm: the SM number (``90`` for ``sm_90``).
        ptx_isa: PTX ISA x10 (``80`` = 8.0); default: max(8.0, the SM's minimum), capped by
            LLVM. A backend with a device passes the driver's limit.
        libdevice: path of ``libdevice.10.bc``, or ``None`` for the f32 approximations
            (f64 transcendentals then raise :class:`~accy.errors.CapabilityError`).
        opt_level: LLVM optimisation level 0-3.
        noalias: mark buffer pointers ``noalias`` (read-only ones also ``readonly``, which
            lets loads use the non-coherent cache); one launch must then bind distinct
            buffers, the same contract as the CPU target.
    """

    name = "cuda"
    triple = "nvptx64-nvidia-cuda"
    data_layout = NVPTX64_DATA_LAYOUT
    simt = True
    buffer_address_space = 1
    shared_address_space = 3

    def __init__(self, sm: int = 90, ptx_isa: int | None = None, libdevice: str | None = None,
                 opt_level: int = 3, noalias: bool = True) -> None:
        self.sm = parse_sm(sm)
        floor = min_ptx_isa(self.sm)
        isa = max(_DEFAULT_ISA, floor) if ptx_isa is None else max(ptx_isa, floor)
        self.ptx_isa = min(isa, LLVM_MAX_PTX_ISA)
        self.libdevice = libdevice
        self.opt_level = opt_level
        self.noalias = noalias

    @property
    def cpu(self) -> str:
        """The LLVM CPU name, ``sm_<N>``."""
        return f"sm_{self.sm}"

    @property
    def features(self) -> str:
        """The LLVM feature string, ``+ptx<ISA>``."""
        return f"+ptx{self.ptx_isa}"

    def link_libraries(self) -> tuple[str, ...]:
        """Return the library the generator links: libdevice or the f32 approximations."""
        return (self.libdevice,) if self.libdevice else (FASTMATH_LIBRARY,)

    # checks -------------------------------------------------------------------------------
    def legalize(self, kernel: ir.Kernel) -> None:
        """Refuse oversize work-groups, too much shared memory and f64 math without libdevice.

        Raises:
            CapabilityError: with the limit and what to change.
        """
        if kernel.workgroup_size > _MAX_THREADS:
            raise CapabilityError(
                f"kernel {kernel.name!r}: work-group size must be at most {_MAX_THREADS} on "
                f"cuda, got {kernel.workgroup_size}; choose a smaller workgroup_size",
                feature="workgroup_size", backend="cuda",
            )
        shared = sum(a.size_elems * ir.dtype_bytes(a.dtype) for a in kernel.shared)
        if shared > _MAX_STATIC_SHARED_BYTES:
            raise CapabilityError(
                f"kernel {kernel.name!r}: static shared memory must be at most "
                f"{_MAX_STATIC_SHARED_BYTES} bytes on cuda, got {shared}; use smaller arrays",
                feature="shared_memory", backend="cuda",
            )
        if self.libdevice is None:
            op = _first_f64_transcendental(kernel.body)
            if op is not None:
                raise CapabilityError(
                    f"kernel {kernel.name!r}: f64 {op!r} needs libdevice, which was not found; "
                    "set CUDA_HOME or pip install nvidia-cuda-nvcc, or compute in f32",
                    feature="f64_math", backend="cuda", alternative="f32",
                )

    # common hooks -------------------------------------------------------------------------
    def math_function(self, op: str, dtype: str) -> str | None:
        """Return the LLVM intrinsic, libdevice or approximation function for ``op``."""
        suffix = "f32" if dtype == "f32" else "f64"
        if op in _NATIVE:
            return f"llvm.{op}.{suffix}"
        if op not in _LIBDEVICE:
            return None
        if self.libdevice:
            return f"__nv_{op}{'f' if dtype == 'f32' else ''}"
        return f"accy_cuda_fast_{op}f" if dtype == "f32" else None

    def atomic_ordering(self) -> str:
        """Relaxed atomics at device (``.gpu``) scope."""
        return 'syncscope("device") monotonic'

    # SIMT hooks ---------------------------------------------------------------------------
    def entry_definition(self, kernel: ir.Kernel) -> str:
        """Return ``define ptx_kernel void @name(...) "nvvm.maxntid"="<size>" {``."""
        from accy.codegen import llvm_type
        from accy.codegen.emitter import symbol

        params = global_buffer_params(kernel, self.noalias)
        params += [f"{llvm_type(s.dtype)} %s{i}" for i, s in enumerate(kernel.scalars)]
        return (
            f"define ptx_kernel void {symbol(kernel.name)}({', '.join(params)}) "
            f'"nvvm.maxntid"="{kernel.workgroup_size}" nounwind {{'
        )

    def thread_id(self, em, kind: str) -> str:  # noqa: ANN001 - FunctionEmitter
        """Read a special register; ``global`` is ``ctaid.x * workgroup_size + tid.x``."""
        if kind == "global":
            group = self.thread_id(em, "group")
            local = self.thread_id(em, "local")
            base = em.value(f"mul nsw i32 {group}, {em.kernel.workgroup_size}")
            return em.value(f"add nsw i32 {base}, {local}")
        register = {"local": "tid", "group": "ctaid", "num_groups": "nctaid"}[kind]
        return em.call(f"llvm.nvvm.read.ptx.sreg.{register}.x", "i32", [])

    def barrier(self, em) -> None:  # noqa: ANN001 - FunctionEmitter
        """``bar.sync 0``: execution barrier that also orders shared-memory accesses."""
        callee = "llvm.nvvm.barrier.cta.sync.aligned.all"
        em.declare(callee, "void", ["i32"])
        em.emit(f"call void @{callee}(i32 0)")


def _first_f64_transcendental(stmts: tuple[ir.Stmt, ...]) -> str | None:
    for node in _walk(stmts):
        if isinstance(node, ir.Unary | ir.Binary) and node.op in _LIBDEVICE:
            if node.dtype == "f64":
                return node.op
    return None


_walk = ir.walk_nodes  # every statement and expression node under a body
