"""VulkanTarget: the shared LLVM generator's description of ``spirv-unknown-vulkan1.3-compute``.

Pure: no device state, no ``vulkan`` import; every idiom comes from ``LLVM-TARGETS.md``.

- Entry point ``@main`` with ``"hlsl.shader"="compute"`` and ``"hlsl.numthreads"``.
- Buffer ``i`` is a storage buffer at set 0, binding ``i``: a ``spirv.VulkanBuffer`` handle
  from ``llvm.spv.resource.handlefrombinding`` whose name string is unique per binding (two
  equal names silently merge two bindings), elements through ``llvm.spv.resource.getpointer``.
- Scalars live in one push-constant block (``addrspace(13)``), see :func:`push_layout`
  (natural alignment, explicit ``i32`` padding members in the LLVM struct);
  ``bool`` travels as ``i32``. Its last field is the total work-group count, so a launch
  larger than ``maxComputeWorkGroupCount`` can be split with ``vkCmdDispatchBase``.
  A block larger than the device's ``maxPushConstantsSize`` (128 bytes on many devices)
  moves, same bytes, same offsets, into a read-only storage buffer bound after the kernel's
  buffers (:meth:`VulkanTarget.scalar_binding`), read as 32-bit words (a runtime array of
  ``i32`` has stride 4 in every layout, so std140/std430 rules never come in).
- At most ``max_storage_buffers`` bindings per kernel (the scalar buffer included): more
  is refused by :meth:`VulkanTarget.legalize` (fusion splits regions before that).
- Barriers: ``llvm.spv.group.memory.barrier.with.group.sync``; the emitted semantics lack
  the WorkgroupMemory bit and :func:`accy_backend_vulkan.toolchain.finish_spirv` patches them.
- Atomics: ``atomicrmw`` with ``syncscope("device") monotonic`` (default scope is CrossDevice;
  the relaxed semantics' ``OpConstantNull`` is rewritten by ``toolchain.null_to_const``); no
  ``cmpxchg`` (LLVM 22 crashes). Not ``acq_rel``: see :meth:`VulkanTarget.atomic_ordering`.
- Sign extension is emitted as shifts (a lavapipe bug miscompares ``OpSConvert`` results,
  see :meth:`VulkanTarget.sign_extend`).
- Middle end: the ``light`` pipeline (InstCombine/GVN break work-group arrays).
- f64 ``exp``/``log``/``sin``/``cos``/``tanh``/``exp2``/``log2``/``pow``: GLSL.std.450 is
  32-bit only, so :meth:`VulkanTarget.legalize` refuses them (``CapabilityError``).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from accy.codegen import GENERATOR_REVISION, BaseTarget, CodegenRequest, llvm_type
from accy.codegen.spirv import CODEGEN_OPT_LEVEL
from accy.errors import CapabilityError, OutOfResources
from accy.kernel import AtomicRMW, For, If, Kernel, ThreadId, Unary

from accy_backend_vulkan.ieee import guarded_op
from accy_backend_vulkan.scalar_words import load_word, scalar_word_loads

if TYPE_CHECKING:
    from accy.codegen.emitter import FunctionEmitter

__all__ = ["ALL_FEATURES", "DTYPE_FEATURES", "IEEE_FLOAT_CONTROLS", "WORD_SCALARS", "PushField",
           "VulkanTarget", "push_layout"]

TRIPLE = "spirv-unknown-vulkan1.3-compute"
SPIRV_EXTENSIONS = (
    "--spirv-ext=+SPV_EXT_shader_atomic_float_add,+SPV_EXT_shader_atomic_float_min_max"
)  # 8/16-bit storage is core in Vulkan 1.2+: LLVM emits the capabilities without an extension
#: device features the target can use (a device lacking one is described without it);
#: ``int8`` = shaderInt8 + storageBuffer8BitAccess, ``int16`` = shaderInt16 +
#: storageBuffer16BitAccess (SPIR-V Int8/Int16 and StorageBuffer8/16BitAccess capabilities)
ALL_FEATURES = frozenset({"f64", "i64", "float_atomics", "float_atomic_minmax", "f64_atomics",
                          "int8", "int16"})
#: kernel dtype → the device feature it needs (dtypes not listed need none)
DTYPE_FEATURES = {"f64": "f64", "i64": "i64", "u64": "i64", "i8": "int8", "u8": "int8",
                  "i16": "int16", "u16": "int16"}
#: scalars that travel as one 32-bit word (sign/zero-extended) in the push block
WORD_SCALARS = frozenset({"bool", "i8", "u8", "i16", "u16"})
_F64_TRANSCENDENTAL = frozenset({"exp", "log", "sin", "cos", "tanh", "exp2", "log2"})
_THREAD_INTRINSICS = {
    "global": "llvm.spv.thread.id.i32",
    "local": "llvm.spv.thread.id.in.group.i32",
    "group": "llvm.spv.group.id.i32",
}
_MANGLE = {"float": "f32", "double": "f64", "i32": "i32", "i64": "i64", "i8": "i8",
           "i16": "i16"}
_BARRIER = "llvm.spv.group.memory.barrier.with.group.sync"
#: IEEE semantics for NaN, ±inf and -0.0 at both float widths (docs/numerics.md)
IEEE_FLOAT_CONTROLS = {"SignedZeroInfNanPreserve": frozenset({32, 64})}
#: bumped when the emitted code changes for the same kernel (part of the fingerprint, so
#: artifacts cached on disk by an older generator are not reused)
CODEGEN_REVISION = "10"


@dataclass(frozen=True)
class PushField:
    """One push-constant field: scalar name, kernel dtype, LLVM type, byte offset."""

    name: str
    dtype: str
    llvm_type: str
    offset_bytes: int


def push_layout(kernel: Kernel) -> tuple[list[PushField], int]:
    """Return the push-constant fields of ``kernel`` and the block size in bytes.

    Fields: each scalar in order (``bool`` and 8/16-bit integers as ``i32``), then
    ``i32 num_groups``. Offsets use
    natural alignment, as LLVM's SPIR-V data layout does for the non-packed struct.
    """
    fields: list[PushField] = []
    offset = 0
    items = [(s.name, s.dtype) for s in kernel.scalars] + [("num_groups", "i32")]
    for name, dtype in items:
        ty = "i32" if dtype in WORD_SCALARS else llvm_type(dtype)
        size = 8 if ty in ("i64", "double") else 4
        offset = (offset + size - 1) // size * size
        fields.append(PushField(name, dtype, ty, offset))
        offset += size
    return fields, (offset + 7) // 8 * 8


def _push_members(kernel: Kernel) -> tuple[str, list[int]]:
    """Return the LLVM struct of the push block and the member index of each field.

    Padding is explicit (``i32`` members): the module has no data layout, and LLVM's default
    one aligns ``i64``/``double`` to 4 bytes, which puts an i64 after an odd number of
    4-byte scalars at offset 4 (mod 8) and fails spirv-val's push-constant layout rules.
    """
    fields, _ = push_layout(kernel)
    members: list[str] = []
    index: list[int] = []
    offset = 0
    for f in fields:
        while offset < f.offset_bytes:
            members.append("i32")
            offset += 4
        index.append(len(members))
        members.append(f.llvm_type)
        offset += 8 if f.llvm_type in ("i64", "double") else 4
    return "{ " + ", ".join(members) + " }", index


def _push_struct(kernel: Kernel) -> str:
    return _push_members(kernel)[0]


def _needs_push(kernel: Kernel) -> bool:
    if kernel.scalars:
        return True
    return any(
        isinstance(e, ThreadId) and e.kind == "num_groups"
        for stmt in _walk(kernel.body)
        for e in _stmt_exprs(stmt)
    )


def _walk(stmts: tuple[Any, ...]) -> Any:
    for s in stmts:
        yield s
        if isinstance(s, For):
            yield from _walk(s.body)
        elif isinstance(s, If):
            yield from _walk(s.then)
            yield from _walk(s.orelse)


def _exprs(e: Any) -> Any:
    yield e
    for name in ("x", "a", "b", "cond", "index", "value"):
        child = getattr(e, name, None)
        if child is not None and hasattr(child, "dtype"):
            yield from _exprs(child)


def _stmt_exprs(s: Any) -> Any:
    for name in ("value", "index", "start", "stop", "step", "cond"):
        child = getattr(s, name, None)
        if child is not None and hasattr(child, "dtype"):
            yield from _exprs(child)


class VulkanTarget(BaseTarget):
    """The Vulkan compute target description.

    Args:
        features: what the device offers, names from :data:`ALL_FEATURES` (default: all).
        max_storage_buffers: ``maxPerStageDescriptorStorageBuffers`` (None: no limit).
        max_push_constant_bytes: ``maxPushConstantsSize`` (default 128, Vulkan's minimum).
        float_controls: float-controls execution modes to request, name → float widths
            (:data:`accy_backend_vulkan.float_controls.FLOAT_CONTROLS`); default
            :data:`IEEE_FLOAT_CONTROLS`. The device passes what it supports.
    """

    name = "vulkan"
    triple = TRIPLE
    data_layout = ""
    simt = True
    buffer_address_space = 11
    shared_address_space = 3
    # LLVM's SPIR-V backend turns llvm.fpto*i.sat into SaturatedConversion, a Kernel-only
    # decoration that Vulkan (spirv-val) rejects: every f32 -> i32 cast failed to compile.
    saturating_casts = False

    def __init__(
        self,
        features: frozenset[str] = ALL_FEATURES,
        max_storage_buffers: int | None = None,
        max_push_constant_bytes: int = 128,
        float_controls: dict[str, frozenset[int]] | None = None,
    ) -> None:
        self.features = frozenset(features)
        self.max_storage_buffers = max_storage_buffers
        self.max_push_constant_bytes = max_push_constant_bytes
        self.float_controls = dict(IEEE_FLOAT_CONTROLS if float_controls is None
                                   else float_controls)

    def with_limits(self, **limits: int | None) -> VulkanTarget:
        """Return a copy with other ``max_storage_buffers``/``max_push_constant_bytes``
        (tests lower a device's limits with it)."""
        kw: dict[str, Any] = {
            "max_storage_buffers": self.max_storage_buffers,
            "max_push_constant_bytes": self.max_push_constant_bytes,
        }
        kw.update(limits)
        return VulkanTarget(self.features, float_controls=self.float_controls, **kw)

    def scalar_binding(self, kernel: Kernel) -> int | None:
        """Binding of the scalar storage buffer, or None when the scalars fit in push
        constants (their block, :func:`push_layout`, is at most ``max_push_constant_bytes``)."""
        if not kernel.scalars or push_layout(kernel)[1] <= self.max_push_constant_bytes:
            return None
        return len(kernel.buffers)

    def bindings(self, kernel: Kernel) -> int:
        """Storage-buffer bindings ``kernel`` uses (its buffers, plus the scalar buffer)."""
        return len(kernel.buffers) + (self.scalar_binding(kernel) is not None)

    def dtypes(self) -> frozenset[str]:
        """Kernel dtypes this target can run: the 32-bit ones and bool, plus those whose
        device feature (:data:`DTYPE_FEATURES`) it has."""
        return frozenset({"f32", "i32", "u32", "bool"} | {
            d for d, f in DTYPE_FEATURES.items() if f in self.features})

    def fingerprint(self) -> str:
        """Return a sha256 hex of (triple, features, LLVM version, codegen revision)."""
        import llvmlite.binding as llvm

        parts = (self.triple, ",".join(sorted(self.features)), str(llvm.llvm_version_info),
                 CODEGEN_REVISION, GENERATOR_REVISION, str(self.max_storage_buffers),
                 str(self.max_push_constant_bytes),
                 repr(sorted((k, sorted(v)) for k, v in self.float_controls.items())))
        return hashlib.sha256("\0".join(parts).encode()).hexdigest()

    # checks -----------------------------------------------------------------------------
    def _refuse(self, kernel: Kernel, what: str, feature: str, fix: str) -> CapabilityError:
        return CapabilityError(
            f"kernel {kernel.name!r}: {what} is not supported by backend 'vulkan'; {fix}",
            feature=feature,
            backend="vulkan",
            alternative=fix,
        )

    def legalize(self, kernel: Kernel) -> None:
        """Refuse f64 transcendentals, missing dtypes and float atomics the device lacks.

        Raises:
            CapabilityError: names the kernel, the construct and what to do instead.
        """
        dtypes = [b.dtype for b in kernel.buffers] + [s.dtype for s in kernel.scalars]
        for stmt in _walk(kernel.body):
            for e in _stmt_exprs(stmt):
                dtypes.append(e.dtype)
                is_pow = getattr(e, "op", None) == "pow" and e.dtype == "f64"
                if (
                    isinstance(e, Unary)
                    and e.op in _F64_TRANSCENDENTAL
                    and e.dtype == "f64"
                    or is_pow
                ):
                    raise self._refuse(
                        kernel,
                        f"f64 {e.op} (GLSL.std.450 is 32-bit only)",
                        "f64_math",
                        "compute the math function in f32",
                    )
            if isinstance(stmt, AtomicRMW):
                self._check_atomic(kernel, stmt)
        for dtype in sorted(set(dtypes) & DTYPE_FEATURES.keys()):
            feature = DTYPE_FEATURES[dtype]
            if feature not in self.features:
                raise self._refuse(kernel, f"dtype {dtype} (device feature {feature})", feature,
                                   f"cast {dtype} to 32 bits")
        limit = self.max_storage_buffers
        if limit is not None and self.bindings(kernel) > limit:
            raise OutOfResources(
                f"kernel {kernel.name!r} binds {self.bindings(kernel)} storage buffers "
                f"(scalar buffer included); the device allows {limit} per kernel "
                "(maxPerStageDescriptorStorageBuffers): split it into kernels with fewer buffers",
                resource="storage_buffers", required=self.bindings(kernel), limit=limit,
            )

    def _check_atomic(self, kernel: Kernel, stmt: AtomicRMW) -> None:
        dtype = stmt.value.dtype
        if dtype == "i64":
            # LLVM 22's SPIR-V backend aborts the process on any 64-bit integer atomicrmw
            # for this triple ("Unable to meet SPIR-V requirements for this target": no
            # Int64Atomics for the Vulkan environment), so it must never see one.
            raise self._refuse(
                kernel,
                f"atomic {stmt.op} on i64 (LLVM's SPIR-V backend has no Int64Atomics)",
                "int64_atomics",
                "use a reduction without 64-bit integer atomics",
            )
        if dtype not in ("f32", "f64"):
            return
        need = "float_atomics" if stmt.op in ("add", "xchg") else "float_atomic_minmax"
        if dtype == "f64":
            need = "f64_atomics"
        if need not in self.features:
            raise self._refuse(
                kernel,
                f"atomic {stmt.op} on {dtype}",
                "float64_atomics" if dtype == "f64" else "float_atomics",
                "use a reduction without float atomics",
            )

    # code generation hooks --------------------------------------------------------------
    def atomic_ordering(self) -> str:
        """Device scope, relaxed.

        lavapipe (Mesa 22.3.6) bug: an ``OpAtomic*`` with non-relaxed semantics (AcquireRelease,
        Release or SequentiallyConsistent, no storage-class bits) inside a conditional inside
        a loop ends the invocation after the first such atomic (nothing after it, in the loop
        or after it, takes effect): ``spmv.coo``'s row-boundary flush returned all zeros.
        Reproducer: ``for j < n: if j % 3 == 0: atomic_add(c[j], 1)`` then ``c[20] = n``.
        The kernels' atomics are accumulations read after the launch (ordering between
        launches comes from the queue), so relaxed ordering is all they need.
        """
        return 'syncscope("device") monotonic'

    def guarded_op(self, em: FunctionEmitter, op: str, args: list[str], dtype: str) -> str | None:
        """IEEE-correct lowering where the driver differs (:mod:`accy_backend_vulkan.ieee`)."""
        return guarded_op(em, op, args, dtype, f64="f64" in self.features)

    def sign_extend(self, em: FunctionEmitter, x: str, source_type: str, type_: str) -> str:
        """Sign-extend as ``ashr(shl(zext x, k), k)`` instead of ``sext`` (``OpSConvert``).

        lavapipe (Mesa 22.3.6) bug: an ordered compare of an ``OpSConvert`` i32->i64 result
        with a constant that fits in 32 bits gives a constant (``sext(x) < 0`` always false,
        ``sext(x) > 0`` always true; ``==`` and compares of two converted values are right),
        so ``gather(mode="raise")`` with int32 indices dropped negative indices. Reproducer:
        ``out[i] = select(i64(x[i]) < 0, 1, 0)`` on an i32 buffer. The SPIR-V is valid.
        """
        bits = {"i8": 8, "i16": 16, "i32": 32, "i64": 64}
        shift = bits[type_] - bits[source_type]
        wide = em.value(f"zext {source_type} {x} to {type_}")
        high = em.value(f"shl {type_} {wide}, {shift}")
        return em.value(f"ashr {type_} {high}, {shift}")

    def module_prelude(self, kernel: Kernel) -> list[str]:
        """Return the binding name strings, the push-constant block and the attributes."""
        lines = []
        for i, b in enumerate(kernel.buffers):
            text = f"accy.b{i}.{b.name}"
            escaped = "".join(c if c.isalnum() or c in "._" else "_" for c in text)
            lines.append(
                f"@.binding.{i} = private unnamed_addr constant [{len(escaped) + 1} x i8] "
                f'c"{escaped}\\00", align 1'
            )
        spill = self.scalar_binding(kernel)
        if spill is not None:
            lines.append(
                f"@.binding.{spill} = private unnamed_addr constant [13 x i8] "
                'c"accy.scalars\\00", align 1'
            )
        elif _needs_push(kernel):  # an unused push block miscompiles (duplicate SPIR-V id)
            lines.append(
                f"@accy.push = external hidden addrspace(13) global {_push_struct(kernel)}, align 8"
            )
        lines.append(
            f'attributes #0 = {{ "hlsl.numthreads"="{kernel.workgroup_size},1,1" '
            f'"hlsl.shader"="compute" }}'
        )
        lines.append("attributes #1 = { convergent nounwind }")
        return lines

    def entry_definition(self, kernel: Kernel) -> str:
        """Return ``define void @main() #0 {`` (the SPIR-V entry point is ``main``)."""
        return "define void @main() #0 {"

    @staticmethod
    def _handle_type(element_type: str) -> tuple[str, str]:
        ty = f'target("spirv.VulkanBuffer", [0 x {element_type}], 12, 1)'
        return ty, f"tspirv.VulkanBuffer_a0{_MANGLE[element_type]}_12_1t"

    def entry_prologue(self, em: FunctionEmitter) -> list[str]:
        """Define ``%b<i>`` (buffer handles) and ``%s<i>`` (push constants) first."""
        from accy.codegen import memory_type

        kernel = em.kernel
        lines = []
        for i, b in enumerate(kernel.buffers):
            ty, mangled = self._handle_type(memory_type(b.dtype))
            callee = f"llvm.spv.resource.handlefrombinding.{mangled}"
            em.declare(callee, ty, ["i32", "i32", "i32", "i32", "ptr"])
            lines.append(
                f"  %b{i} = call {ty} @{callee}(i32 0, i32 {i}, i32 1, i32 0, ptr @.binding.{i})"
            )
            em.buffer_values[b.name] = f"%b{i}"
        fields, _ = push_layout(kernel)
        spill = self.scalar_binding(kernel)
        if spill is not None:
            return lines + scalar_word_loads(em, self._handle_type("i32"), spill, fields)
        struct, member = _push_members(kernel)
        for i, f in enumerate(fields[:-1]):
            raw = f"%s{i}.raw" if f.dtype in WORD_SCALARS else f"%s{i}"
            lines += [
                f"  %s{i}.p = getelementptr inbounds {struct}, ptr addrspace(13) "
                f"@accy.push, i32 0, i32 {member[i]}",
                f"  {raw} = load {f.llvm_type}, ptr addrspace(13) %s{i}.p, align 4",
            ]
            if f.dtype == "bool":
                lines.append(f"  %s{i} = icmp ne i32 {raw}, 0")
            elif f.dtype in WORD_SCALARS:
                lines.append(f"  %s{i} = trunc i32 {raw} to {llvm_type(f.dtype)}")
        return lines

    def buffer_element_pointer(
        self, em: FunctionEmitter, handle: str, element_type: str, index64: str
    ) -> str:
        """Emit ``getpointer(handle, index)`` and return the ``addrspace(11)`` pointer."""
        ty, mangled = self._handle_type(element_type)
        callee = f"llvm.spv.resource.getpointer.p11.{mangled}"
        em.declare(callee, "ptr addrspace(11)", [ty, "i32"])
        index = em.value(f"trunc i64 {index64} to i32")
        p = em.value(f"call ptr addrspace(11) @{callee}({ty} {handle}, i32 {index})")
        return f"ptr addrspace(11) {p}"

    def thread_id(self, em: FunctionEmitter, kind: str) -> str:
        """Read GlobalInvocationId/LocalInvocationId/WorkgroupId x; ``num_groups`` comes
        from the push-constant block (a split dispatch would see only its own part)."""
        if kind == "num_groups" and self.scalar_binding(em.kernel) is not None:
            fields, _ = push_layout(em.kernel)
            return load_word(em, self._handle_type("i32"), fields[-1].offset_bytes // 4)
        if kind == "num_groups":
            struct, member = _push_members(em.kernel)
            p = em.value(
                f"getelementptr inbounds {struct}, ptr addrspace(13) @accy.push, "
                f"i32 0, i32 {member[-1]}"
            )
            return em.value(f"load i32, ptr addrspace(13) {p}, align 4")
        return em.call(_THREAD_INTRINSICS[kind], "i32", [("i32", "0")])

    def barrier(self, em: FunctionEmitter) -> None:
        """Emit the group barrier (semantics patched after emission)."""
        em.declarations[_BARRIER] = f"declare void @{_BARRIER}() #1"
        em.emit(f"call void @{_BARRIER}()")

    def shared_array_global(self, name: str, element_type: str, size_elems: int) -> str:
        """An ``internal addrspace(3)`` array, ``poison``-initialised (Workgroup storage)."""
        return (
            f'@"{name}" = internal addrspace(3) global [{size_elems} x {element_type}] '
            f"poison, align 4"
        )

    def request(self, llvm_ir: str, outputs: tuple[str, ...] = ("spirv-obj",)) -> CodegenRequest:
        """Return the worker request: ``light`` middle end, float-atomic extensions on."""
        return CodegenRequest(
            ir=llvm_ir,
            triple=self.triple,
            opt_level=CODEGEN_OPT_LEVEL,  # LSR's i2 values miscompile (accy.codegen.spirv)
            outputs=outputs,
            options=(SPIRV_EXTENSIONS,),
            pipeline="light",
        )
