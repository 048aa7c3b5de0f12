"""OpenCLTarget: the shared LLVM generator's description of ``spirv64-unknown-unknown``.

Pure: no device, no ``pyopencl`` import; the idioms come from ``LLVM-TARGETS.md`` ("OpenCL
SPIR-V") and every one of them was run on PoCL through the SPIR bridge (:mod:`.bridge`).

- Kernel capability module: ``define spir_kernel void @<entry>(ptr addrspace(1) noalias %b0,
  ..., <scalar> %s0, ...)`` with ``!reqd_work_group_size``. ``bool`` scalars travel as
  ``i32`` (OpenCL forbids ``bool`` kernel arguments) and become ``i1`` in the prologue.
- Buffers live in ``__global`` (``addrspace(1)``), shared arrays in ``__local``
  (``addrspace(3)`` globals).
- Work-item ids through the OpenCL builtins ``get_global_id`` / ``get_local_id`` /
  ``get_group_id`` / ``get_num_groups`` (``size_t`` results truncated to ``i32``); LLVM
  turns them into ``BuiltIn`` variables.
- Barrier ``barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE)``.
- Math: LLVM intrinsics, f32 and f64, which LLVM lowers to ``OpenCL.std`` instructions.
- Atomics: ``atomicrmw ... syncscope("device") monotonic`` on ``__global``. f32 add uses
  ``OpAtomicFAddEXT`` where the device has ``cl_ext_float_atomics`` global add and takes IL
  (feature ``native_float_atomics``); elsewhere float add/min/max are a ``cmpxchg`` loop on
  the value's bits (OpenCL 1.2 core atomics), so every OpenCL device offers float atomics.
- Middle end: the ``light`` pipeline; the driver's own compiler optimises the kernel.
"""

from __future__ import annotations

import hashlib
import re
from typing import TYPE_CHECKING

from accy.codegen import BaseTarget, CodegenRequest, llvm_type
from accy.codegen.spirv import CODEGEN_OPT_LEVEL
from accy.codegen.target import global_buffer_params
from accy.errors import CapabilityError
from accy.kernel import ir

if TYPE_CHECKING:
    from accy.codegen.emitter import FunctionEmitter

__all__ = ["ALL_FEATURES", "CODEGEN_REVISION", "PORTABLE_FEATURES", "OpenCLTarget", "entry_name"]

TRIPLE = "spirv64-unknown-unknown"
SPIRV_EXTENSIONS = "--spirv-ext=+SPV_EXT_shader_atomic_float_add"
#: device features the target can use (names of :data:`accy.backend.FEATURES` plus
#: ``native_float_atomics``: ``cl_ext_float_atomics`` add on f32)
ALL_FEATURES = frozenset({"f64", "i64", "int64_atomics", "subgroups", "native_float_atomics"})
#: what SPIR-V compiled without a device assumes: OpenCL 2.1+ full profile with fp64 and
#: 64-bit atomics, float atomics as ``cmpxchg`` loops (runs on any such device)
PORTABLE_FEATURES = frozenset({"f64", "i64", "int64_atomics"})
#: bumped when the emitted code changes for the same kernel (part of the fingerprint)
CODEGEN_REVISION = "2"
_BUILTINS = {
    "global": "_Z13get_global_idj",
    "local": "_Z12get_local_idj",
    "group": "_Z12get_group_idj",
    "num_groups": "_Z14get_num_groupsj",
}
_BARRIER = "_Z7barrierj"
_FENCE_LOCAL_AND_GLOBAL = 3  # CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE
_ORDERING = 'syncscope("device") monotonic'
_FLOAT_OPS = {"add": "fadd", "min": "minnum", "max": "maxnum"}


def entry_name(kernel_name: str) -> str:
    """Return the OpenCL kernel name of ``kernel_name``: a C identifier (``accy_`` prefix;
    any other character becomes ``_`` and a short hash keeps the name unique)."""
    clean = re.sub(r"\W", "_", kernel_name)
    if clean != kernel_name:
        clean += "_" + hashlib.sha256(kernel_name.encode()).hexdigest()[:8]
    return "accy_" + clean


class OpenCLTarget(BaseTarget):
    """The OpenCL SPIR-V target description for one device's feature set and limits.

    Args:
        features: what the device offers, names from :data:`ALL_FEATURES` (default: all).
        max_workgroup_size: most work-items per work-group (``None``: not checked).
        local_memory_bytes: ``__local`` bytes per work-group (``None``: not checked).
        noalias: mark buffer pointers ``noalias`` (one launch must bind distinct buffers,
            the contract of the CPU and CUDA targets).
    """

    name = "opencl"
    triple = TRIPLE
    data_layout = ""
    simt = True
    buffer_address_space = 1
    shared_address_space = 3

    def __init__(
        self,
        features: frozenset[str] = ALL_FEATURES,
        max_workgroup_size: int | None = None,
        local_memory_bytes: int | None = None,
        noalias: bool = True,
    ) -> None:
        self.features = frozenset(features)
        self.max_workgroup_size = max_workgroup_size
        self.local_memory_bytes = local_memory_bytes
        self.noalias = noalias

    def fingerprint(self) -> str:
        """Return a sha256 hex of (triple, features, LLVM version, codegen revision)."""
        import llvmlite.binding as llvm

        parts = (self.triple, ",".join(sorted(self.features)), str(llvm.llvm_version_info),
                 CODEGEN_REVISION, str(self.noalias))
        return hashlib.sha256("\0".join(parts).encode()).hexdigest()

    # checks -------------------------------------------------------------------------------
    def _refuse(self, kernel: ir.Kernel, what: str, feature: str, fix: str) -> CapabilityError:
        return CapabilityError(
            f"kernel {kernel.name!r}: {what} is not supported by backend 'opencl' on this "
            f"device; {fix}",
            feature=feature, backend="opencl", alternative=fix,
        )

    def legalize(self, kernel: ir.Kernel) -> None:
        """Refuse dtypes, 64-bit atomics and sizes beyond the device.

        Raises:
            CapabilityError: names the kernel, the construct, the limit and what to do.
        """
        limit = self.max_workgroup_size
        if limit is not None and kernel.workgroup_size > limit:
            raise self._refuse(kernel, f"work-group size {kernel.workgroup_size} (at most "
                               f"{limit})", "workgroup_size", "choose a smaller workgroup_size")
        shared = sum(a.size_elems * ir.dtype_bytes(a.dtype) for a in kernel.shared)
        if self.local_memory_bytes is not None and shared > self.local_memory_bytes:
            raise self._refuse(kernel, f"{shared} bytes of shared memory (at most "
                               f"{self.local_memory_bytes})", "shared_memory",
                               "use smaller shared arrays")
        dtypes = {b.dtype for b in kernel.buffers} | {s.dtype for s in kernel.scalars}
        for node in _walk(kernel.body):
            if hasattr(node, "dtype"):
                dtypes.add(node.dtype)
            if isinstance(node, ir.AtomicRMW) and node.value.dtype == "i64":
                if "int64_atomics" not in self.features:
                    raise self._refuse(kernel, f"atomic {node.op} on i64 (no "
                                       "cl_khr_int64_base_atomics)", "int64_atomics",
                                       "use a reduction without 64-bit integer atomics")
        for dtype in ("f64", "i64"):
            if dtype in dtypes and dtype not in self.features:
                raise self._refuse(kernel, f"dtype {dtype}", dtype, f"cast {dtype} to 32 bits")

    # common hooks -------------------------------------------------------------------------
    def atomic_ordering(self) -> str:
        """Relaxed atomics at device scope (the default scope is CrossDevice)."""
        return _ORDERING

    def module_prelude(self, kernel: ir.Kernel) -> list[str]:
        """Return the attribute groups and the ``reqd_work_group_size`` node."""
        return [
            "attributes #0 = { nounwind }",
            "attributes #1 = { convergent nounwind }",
            "attributes #2 = { nounwind willreturn memory(none) }",
            f"!0 = !{{i32 {kernel.workgroup_size}, i32 1, i32 1}}",
        ]

    # SIMT hooks ---------------------------------------------------------------------------
    def entry_definition(self, kernel: ir.Kernel) -> str:
        """Return ``define spir_kernel void @<entry>(...) #0 !reqd_work_group_size !0 {``."""
        params = global_buffer_params(kernel, self.noalias)
        for i, s in enumerate(kernel.scalars):
            params.append(f"i32 %s{i}.raw" if s.dtype == "bool" else f"{llvm_type(s.dtype)} %s{i}")
        return (f"define spir_kernel void @{entry_name(kernel.name)}({', '.join(params)}) #0 "
                "!reqd_work_group_size !0 {")

    def entry_prologue(self, em: FunctionEmitter) -> list[str]:
        """Turn the ``i32`` carriers of ``bool`` scalars into ``i1`` values ``%s<i>``."""
        return [f"  %s{i} = icmp ne i32 %s{i}.raw, 0"
                for i, s in enumerate(em.kernel.scalars) if s.dtype == "bool"]

    def thread_id(self, em: FunctionEmitter, kind: str) -> str:
        """Call the OpenCL work-item builtin of ``kind`` for dimension 0."""
        callee = _BUILTINS[kind]
        em.declarations[callee] = f"declare spir_func i64 @{callee}(i32) #2"
        wide = em.value(f"call spir_func i64 @{callee}(i32 0) #2")
        return em.value(f"trunc i64 {wide} to i32")

    def barrier(self, em: FunctionEmitter) -> None:
        """``barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE)``."""
        em.declarations[_BARRIER] = f"declare spir_func void @{_BARRIER}(i32) #1"
        em.emit(f"call spir_func void @{_BARRIER}(i32 {_FENCE_LOCAL_AND_GLOBAL}) #1")

    def atomic_rmw(self, em: FunctionEmitter, op: str, pointer: str, value: str,
                   dtype: str) -> bool:
        """Emit float add/min/max as a ``cmpxchg`` loop unless the device adds natively.

        Returns:
            whether the atomic was emitted here (False: the generator's ``atomicrmw``).
        """
        if dtype not in ("f32", "f64") or op not in _FLOAT_OPS:
            return False
        if op == "add" and dtype == "f32" and "native_float_atomics" in self.features:
            return False
        ty, bits = llvm_type(dtype), "i32" if dtype == "f32" else "i64"
        pre = em.branch_to_new_block("atomic.pre")
        first = em.value(f"load atomic {bits}, {pointer} {_ORDERING}, align "
                         f"{ir.dtype_bytes(dtype)}")
        loop, done = em.fresh("atomic.loop"), em.fresh("atomic.done")
        old, seen = "%" + em.fresh("atomic.old"), "%" + em.fresh("atomic.seen")
        em.emit(f"br label %{loop}")
        em.label(loop)
        em.emit(f"{old} = phi {bits} [{first}, %{pre}], [{seen}, %{loop}]")
        current = em.value(f"bitcast {bits} {old} to {ty}")
        if op == "add":
            updated = em.value(f"fadd {ty} {current}, {value}")
        else:
            updated = em.call(f"llvm.{_FLOAT_OPS[op]}.{dtype}", ty, [(ty, current), (ty, value)])
        new = em.value(f"bitcast {ty} {updated} to {bits}")
        pair = em.value(f"cmpxchg {pointer}, {bits} {old}, {bits} {new} {_ORDERING} monotonic")
        em.emit(f"{seen} = extractvalue {{ {bits}, i1 }} {pair}, 0")
        ok = em.value(f"extractvalue {{ {bits}, i1 }} {pair}, 1")
        em.emit(f"br i1 {ok}, label %{done}, label %{loop}")
        em.label(done)
        return True

    def request(self, llvm_ir: str) -> CodegenRequest:
        """Return the worker request: ``light`` middle end, float-add extension on."""
        # codegen level 0: LSR's i2 values miscompile (accy.codegen.spirv.CODEGEN_OPT_LEVEL)
        return CodegenRequest(ir=llvm_ir, triple=self.triple, opt_level=CODEGEN_OPT_LEVEL,
                              outputs=("spirv-obj",), options=(SPIRV_EXTENSIONS,),
                              pipeline="light")


_walk = ir.walk_nodes  # every statement and expression node under a body
