"""VulkanBackend: SPIR-V kernels on a Vulkan device through the cffi ``vulkan`` package.

With device.py, the only modules importing ``vulkan``. One instance, one device, one queue.

- Device setup and selection: :mod:`accy_backend_vulkan.device`.
- Buffers: host-visible, host-coherent memory, persistently mapped; ``write``/``read`` are
  memcpy after waiting for outstanding work. Freed buffers go to a size-keyed free list and
  are reused, so a compiled executable called in a loop reuses the same ``VkBuffer`` handles
  (and so the same cached descriptor sets): nothing is created per call in steady state.
- Launch: one primary command buffer per launch (from a recycled pool), a global memory
  barrier before the dispatch (ordering after earlier launches) and one to the host after it;
  the fence is recycled at :meth:`synchronize`. Scalars go to push constants (layout:
  :func:`accy_backend_vulkan.target.push_layout`). More work-groups than
  ``maxComputeWorkGroupCount[0]`` are split with ``vkCmdDispatchBase``.
- Streams and events: one in-order queue; an event is the fence of the launch it signals.

Size: the protocol has 20 methods and ruff formats each cffi struct one field per line;
buffers, pipelines and launches share the device state, so they stay in one class.
"""

from __future__ import annotations

import hashlib
import struct
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import vulkan as vk
from accy import config
from accy.backend import Artifact, Capabilities, TargetProfile
from accy.codegen import emit_llvm_ir
from accy.errors import (
    LaunchError,
    OutOfResources,
    UnsupportedError,
)
from accy.kernel import Kernel

from accy_backend_vulkan.device import DeviceSetup, probe_devices
from accy_backend_vulkan.target import push_layout
from accy_backend_vulkan.toolchain import compile_spirv, validate

__all__ = ["VulkanBackend", "VulkanBuffer", "probe_devices"]

_PACK = {"f32": "<f", "f64": "<d", "i32": "<i", "i64": "<q", "u32": "<I", "bool": "<i"}
_NUMPY = {
    "f32": np.float32,
    "f64": np.float64,
    "i32": np.int32,
    "i64": np.int64,
    "u32": np.uint32,
    "bool": np.bool_,
}
_EMIT_FORMATS = ("spirv", "llvm")
_DISPATCH_BASE = getattr(vk, "VK_PIPELINE_CREATE_DISPATCH_BASE_KHR", 0x10)
_DESCRIPTOR_CACHE_LIMIT = 64


@dataclass(eq=False)
class VulkanBuffer:
    """A storage buffer in host-visible memory, mapped at ``view`` (``nbytes`` bytes)."""

    buffer: Any
    memory: Any
    nbytes: int
    capacity_bytes: int
    view: np.ndarray
    released: bool = False


@dataclass(eq=False)
class LoadedKernel:
    """A compute pipeline plus its layouts, push-constant layout and descriptor sets."""

    artifact: Artifact
    module: Any
    set_layout: Any
    pipeline_layout: Any
    pipeline: Any
    descriptor_pool: Any
    push_fields: list[Any]
    push_bytes: int
    descriptor_sets: dict[tuple[int, ...], Any] = field(default_factory=dict)


@dataclass(eq=False)
class _Event:
    fence: Any = None


class _Stream:
    """The single in-order compute queue (all streams share it)."""


def _check(call: str, error: Exception) -> Exception:
    if isinstance(error, (vk.VkErrorOutOfDeviceMemory, vk.VkErrorOutOfHostMemory)):
        return OutOfResources(
            f"vulkan {call}: out of memory ({type(error).__name__})", resource="memory"
        )
    return LaunchError(f"vulkan {call} failed: {type(error).__name__} {error}")


class VulkanBackend(DeviceSetup):
    """The accy backend protocol on a Vulkan device (see ``accy.backend.protocol``).

    Args:
        device: physical-device index (default ``ACCY_VULKAN_DEVICE`` or the best one).
        validate_spirv: run ``spirv-val`` on each compiled module (default: when installed).

    Raises:
        BackendUnavailable: no Vulkan loader, no device, or the index is out of range.
    """

    name = "vulkan"

    def __init__(self, device: int | None = None, validate_spirv: bool = True) -> None:
        self.validate_spirv = validate_spirv
        self._free: dict[int, deque[VulkanBuffer]] = {}
        self._live_buffers: set[int] = set()
        self._buffer_users: dict[int, set[LoadedKernel]] = {}
        self._in_flight: list[tuple[Any, Any]] = []
        self._spare: list[tuple[Any, Any]] = []
        self._instance = self._create_instance()
        try:
            self._physical = self._pick(device if device is not None else config.vulkan_device())
            self._create_device()
        except BaseException:
            vk.vkDestroyInstance(self._instance, None)
            raise
        self._caps: Capabilities | None = None

    # description ------------------------------------------------------------------------
    def capabilities(self) -> Capabilities:
        """Return the device's limits and features (no ``f64_math``: GLSL.std.450 is 32-bit)."""
        if self._caps is None:
            p, limits = self._props, self._props.limits
            name = (
                vk.ffi.string(p.deviceName).decode()
                if not isinstance(p.deviceName, str)
                else p.deviceName
            )
            ident = (
                f"{name}|{p.vendorID}|{p.deviceID}|{p.driverVersion}|{self.target.fingerprint()}"
            )
            tf = self.target.features
            dtypes = {"f32", "i32", "u32", "bool"} | ({"f64"} & tf) | ({"i64"} & tf)
            features = {f for f in ("f64", "i64", "float_atomics") if f in tf}
            self._caps = Capabilities(
                backend="vulkan",
                device_name=name,
                device_fingerprint=hashlib.sha256(ident.encode()).hexdigest(),
                dtypes=frozenset(dtypes),
                artifact_formats=_EMIT_FORMATS,
                max_workgroup_size=min(
                    limits.maxComputeWorkGroupInvocations, limits.maxComputeWorkGroupSize[0]
                ),
                subgroup_size=self._subgroup_size(),
                shared_memory_bytes=limits.maxComputeSharedMemorySize,
                features=frozenset(features),
            )
        return self._caps

    def target_profile(self) -> TargetProfile:
        """Return the :class:`TargetProfile` built from :meth:`capabilities`."""
        return TargetProfile.from_capabilities(self.capabilities())

    def live_objects(self) -> dict[str, int]:
        """Return counts of live Vulkan objects this backend created (leak checks)."""
        return {
            "buffers": len(self._live_buffers),
            "free_buffers": sum(len(v) for v in self._free.values()),
            "fences": len(self._in_flight) + len(self._spare),
            "command_buffers": len(self._in_flight) + len(self._spare),
        }

    # compilation ------------------------------------------------------------------------
    def _spirv(self, kernel: Kernel) -> bytes:
        spirv = compile_spirv(kernel, self.target)
        if self.validate_spirv:
            validate(spirv, kernel.name)
        return spirv

    def compile(self, kernel: Kernel, options: dict[str, Any] | None = None) -> Artifact:
        """Compile ``kernel`` to a ``"spirv"`` :class:`Artifact` (entry point ``main``).

        Raises:
            VerifyError: invalid kernel. CapabilityError: f64 math, missing dtype or atomics.
            CodegenError: LLVM failed or the module imports an unknown function.
            CompileError: ``spirv-val`` rejected the module.
        """
        fields, push_bytes = push_layout(kernel)
        metadata = {
            "buffers": [[b.name, b.dtype, b.access] for b in kernel.buffers],
            "scalars": [[s.name, s.dtype] for s in kernel.scalars],
            "workgroup_size": kernel.workgroup_size,
            "push_offsets": [f.offset_bytes for f in fields],
            "push_bytes": push_bytes,
            "target_fingerprint": self.target.fingerprint(),
            "kernel_fingerprint": kernel.fingerprint(),
        }
        return Artifact("vulkan", kernel.name, "spirv", self._spirv(kernel), "main", metadata)

    def emit(self, kernel: Kernel, format: str, **_: Any) -> bytes:
        """Return ``"spirv"`` (validated, patched module) or ``"llvm"`` (generated IR text).

        Raises:
            UnsupportedError: unknown format.
        """
        if format not in _EMIT_FORMATS:
            raise UnsupportedError(
                f"vulkan emit: unknown format {format!r}; known: {', '.join(_EMIT_FORMATS)}",
                feature=format,
                backend="vulkan",
            )
        if format == "llvm":
            return emit_llvm_ir(kernel, self.target).encode()
        return self._spirv(kernel)

    def load(self, artifact: Artifact) -> LoadedKernel:
        """Create the shader module, layouts, pipeline and descriptor pool of ``artifact``.

        Raises:
            LaunchError: wrong backend/format, or the driver refused the pipeline.
        """
        if artifact.backend != "vulkan" or artifact.format != "spirv":
            raise LaunchError(
                f"vulkan load: needs a vulkan 'spirv' artifact, got "
                f"{artifact.backend!r} {artifact.format!r}"
            )
        meta = artifact.metadata
        dev = self._device
        count = len(meta["buffers"])
        try:
            module = vk.vkCreateShaderModule(
                dev,
                vk.VkShaderModuleCreateInfo(
                    sType=vk.VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO,
                    codeSize=len(artifact.data),
                    pCode=artifact.data,
                ),
                None,
            )
            bindings = [
                vk.VkDescriptorSetLayoutBinding(
                    binding=i,
                    descriptorType=vk.VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                    descriptorCount=1,
                    stageFlags=vk.VK_SHADER_STAGE_COMPUTE_BIT,
                )
                for i in range(count)
            ]
            set_layout = vk.vkCreateDescriptorSetLayout(
                dev,
                vk.VkDescriptorSetLayoutCreateInfo(
                    sType=vk.VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO,
                    bindingCount=count,
                    pBindings=bindings or None,
                ),
                None,
            )
            push = vk.VkPushConstantRange(
                stageFlags=vk.VK_SHADER_STAGE_COMPUTE_BIT, offset=0, size=meta["push_bytes"]
            )
            layout = vk.vkCreatePipelineLayout(
                dev,
                vk.VkPipelineLayoutCreateInfo(
                    sType=vk.VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO,
                    setLayoutCount=1,
                    pSetLayouts=[set_layout],
                    pushConstantRangeCount=1,
                    pPushConstantRanges=[push],
                ),
                None,
            )
            # keep the stage struct in a variable: built inline, cffi frees its pName early
            stage = vk.VkPipelineShaderStageCreateInfo(
                sType=vk.VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO,
                stage=vk.VK_SHADER_STAGE_COMPUTE_BIT,
                module=module,
                pName=artifact.entry,
            )
            info = vk.VkComputePipelineCreateInfo(
                sType=vk.VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO,
                stage=stage,
                layout=layout,
                flags=_DISPATCH_BASE,
            )
            pipeline = vk.vkCreateComputePipelines(dev, self._pipeline_cache, 1, [info], None)[0]
            sizes = [
                vk.VkDescriptorPoolSize(
                    type=vk.VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                    descriptorCount=max(count, 1) * _DESCRIPTOR_CACHE_LIMIT,
                )
            ]
            pool = vk.vkCreateDescriptorPool(
                dev,
                vk.VkDescriptorPoolCreateInfo(
                    sType=vk.VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO,
                    flags=vk.VK_DESCRIPTOR_POOL_CREATE_FREE_DESCRIPTOR_SET_BIT,
                    maxSets=_DESCRIPTOR_CACHE_LIMIT,
                    poolSizeCount=1,
                    pPoolSizes=sizes,
                ),
                None,
            )
        except vk.VkError as e:
            raise _check("pipeline creation", e) from e
        return LoadedKernel(
            artifact,
            module,
            set_layout,
            layout,
            pipeline,
            pool,
            list(meta["push_offsets"]),
            meta["push_bytes"],
        )

    # memory -----------------------------------------------------------------------------
    def _memory_type(self, bits: int) -> int:
        want = vk.VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | vk.VK_MEMORY_PROPERTY_HOST_COHERENT_BIT
        for i in range(self._memory.memoryTypeCount):
            if bits >> i & 1 and self._memory.memoryTypes[i].propertyFlags & want == want:
                return i
        raise OutOfResources(
            "vulkan: the device has no host-visible coherent memory for "
            "storage buffers; device-local staging is not implemented",
            resource="host_visible_memory",
        )

    def allocate(self, nbytes: int) -> VulkanBuffer:
        """Return a storage buffer of ``nbytes`` bytes (reused from freed ones when possible).

        Raises:
            OutOfResources: the device is out of memory.
        """
        capacity = max(16, (nbytes + 255) // 256 * 256)
        free = self._free.get(capacity)
        if free:
            buf = free.popleft()  # FIFO: a call loop gets its buffers back in order
            buf.nbytes, buf.released = nbytes, False
            return buf
        dev = self._device
        try:
            handle = vk.vkCreateBuffer(
                dev,
                vk.VkBufferCreateInfo(
                    sType=vk.VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO,
                    size=capacity,
                    usage=vk.VK_BUFFER_USAGE_STORAGE_BUFFER_BIT
                    | vk.VK_BUFFER_USAGE_TRANSFER_SRC_BIT
                    | vk.VK_BUFFER_USAGE_TRANSFER_DST_BIT,
                    sharingMode=vk.VK_SHARING_MODE_EXCLUSIVE,
                ),
                None,
            )
            req = vk.vkGetBufferMemoryRequirements(dev, handle)
            memory = vk.vkAllocateMemory(
                dev,
                vk.VkMemoryAllocateInfo(
                    sType=vk.VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO,
                    allocationSize=req.size,
                    memoryTypeIndex=self._memory_type(req.memoryTypeBits),
                ),
                None,
            )
            vk.vkBindBufferMemory(dev, handle, memory, 0)
            mapped = vk.vkMapMemory(dev, memory, 0, capacity, 0)
        except vk.VkError as e:
            raise _check(f"allocate({nbytes})", e) from e
        view = np.frombuffer(mapped, dtype=np.uint8, count=capacity)
        buf = VulkanBuffer(handle, memory, nbytes, capacity, view)
        self._live_buffers.add(id(buf))
        return buf

    def _check_buffer(self, buf: Any, what: str) -> VulkanBuffer:
        if not isinstance(buf, VulkanBuffer) or buf.released:
            raise LaunchError(
                f"vulkan {what}: expected a live buffer from allocate(), got "
                f"{type(buf).__name__}{' (freed)' if isinstance(buf, VulkanBuffer) else ''}"
            )
        return buf

    def write(self, buf: VulkanBuffer, data: np.ndarray) -> None:
        """Copy ``data``'s bytes to the start of ``buf`` (waits for outstanding work)."""
        raw = np.ascontiguousarray(data).reshape(-1).view(np.uint8)
        self.synchronize()
        self._check_buffer(buf, "write").view[: raw.size] = raw

    def read(self, buf: VulkanBuffer, out: np.ndarray) -> np.ndarray:
        """Copy the first ``out.nbytes`` bytes of ``buf`` into ``out`` and return it."""
        self.synchronize()
        out.reshape(-1).view(np.uint8)[:] = self._check_buffer(buf, "read").view[: out.nbytes]
        return out

    def fill(self, buf: VulkanBuffer, value: int) -> None:
        """Set every byte of ``buf`` to ``value``."""
        self.synchronize()
        self._check_buffer(buf, "fill").view[: buf.nbytes] = value

    def copy(self, src: VulkanBuffer, dst: VulkanBuffer, nbytes: int) -> None:
        """Copy ``nbytes`` bytes from ``src`` to the start of ``dst``."""
        self.synchronize()
        self._check_buffer(dst, "copy").view[:nbytes] = self._check_buffer(src, "copy").view[
            :nbytes
        ]

    def free(self, buf: VulkanBuffer) -> None:
        """Return ``buf`` to the free list; it stays alive (with its descriptor sets) for reuse."""
        if not isinstance(buf, VulkanBuffer) or buf.released:
            return
        self.synchronize()
        buf.released = True
        self._free.setdefault(buf.capacity_bytes, deque()).append(buf)

    def _destroy_buffer(self, buf: VulkanBuffer) -> None:
        for loaded in self._buffer_users.pop(id(buf), set()):
            for key in [k for k in loaded.descriptor_sets if id(buf) in k]:
                vk.vkFreeDescriptorSets(
                    self._device, loaded.descriptor_pool, 1, [loaded.descriptor_sets.pop(key)]
                )
        vk.vkUnmapMemory(self._device, buf.memory)
        vk.vkDestroyBuffer(self._device, buf.buffer, None)
        vk.vkFreeMemory(self._device, buf.memory, None)
        self._live_buffers.discard(id(buf))

    def trim(self) -> None:
        """Destroy every freed buffer kept for reuse."""
        self.synchronize()
        for bufs in self._free.values():
            for buf in bufs:
                self._destroy_buffer(buf)
        self._free.clear()

    def host_view(self, buf: Any, dtype: Any, shape: tuple[int, ...]) -> None:
        """No zero-copy host views (the protocol's ``host_memory`` feature is not offered)."""
        return None

    def import_host(self, array: np.ndarray) -> None:
        """Host arrays cannot be imported; buffers are copied."""
        return None

    # execution --------------------------------------------------------------------------
    def _descriptor_set(self, loaded: LoadedKernel, buffers: list[VulkanBuffer]) -> Any:
        key = tuple(id(b) for b in buffers)
        found = loaded.descriptor_sets.get(key)
        if found is not None:
            return found
        if len(loaded.descriptor_sets) >= _DESCRIPTOR_CACHE_LIMIT:
            old_key = next(iter(loaded.descriptor_sets))
            vk.vkFreeDescriptorSets(
                self._device, loaded.descriptor_pool, 1, [loaded.descriptor_sets.pop(old_key)]
            )
        ds = vk.vkAllocateDescriptorSets(
            self._device,
            vk.VkDescriptorSetAllocateInfo(
                sType=vk.VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO,
                descriptorPool=loaded.descriptor_pool,
                descriptorSetCount=1,
                pSetLayouts=[loaded.set_layout],
            ),
        )[0]
        infos = [
            vk.VkDescriptorBufferInfo(buffer=b.buffer, offset=0, range=b.capacity_bytes)
            for b in buffers
        ]
        writes = [
            vk.VkWriteDescriptorSet(
                sType=vk.VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET,
                dstSet=ds,
                dstBinding=i,
                descriptorCount=1,
                descriptorType=vk.VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                pBufferInfo=[info],
            )
            for i, info in enumerate(infos)
        ]
        if writes:
            vk.vkUpdateDescriptorSets(self._device, len(writes), writes, 0, None)
        loaded.descriptor_sets[key] = ds
        for b in buffers:
            self._buffer_users.setdefault(id(b), set()).add(loaded)
        return ds

    def _push_constants(self, loaded: LoadedKernel, scalars: Sequence[Any], groups: int) -> bytes:
        meta = loaded.artifact.metadata
        expected = meta["scalars"]
        name = loaded.artifact.kernel_name
        if len(scalars) != len(expected):
            raise LaunchError(
                f"launch {name!r}: expected {len(expected)} scalars "
                f"({', '.join(s[0] for s in expected)}), got {len(scalars)}"
            )
        data = bytearray(loaded.push_bytes)
        for (sname, dtype), (given, value), offset in zip(
            expected, scalars, loaded.push_fields, strict=False
        ):
            if given != dtype:
                raise LaunchError(f"launch {name!r}: scalar {sname!r} must be {dtype}, got {given}")
            v = _NUMPY[dtype](value).item()
            struct.pack_into(_PACK[dtype], data, offset, int(v) if dtype == "bool" else v)
        struct.pack_into("<i", data, loaded.push_fields[-1], groups)
        return bytes(data)

    def _command_buffer(self) -> tuple[Any, Any]:
        if self._spare:
            return self._spare.pop()
        cb = vk.vkAllocateCommandBuffers(
            self._device,
            vk.VkCommandBufferAllocateInfo(
                sType=vk.VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
                commandPool=self._command_pool,
                level=vk.VK_COMMAND_BUFFER_LEVEL_PRIMARY,
                commandBufferCount=1,
            ),
        )[0]
        fence = vk.vkCreateFence(
            self._device, vk.VkFenceCreateInfo(sType=vk.VK_STRUCTURE_TYPE_FENCE_CREATE_INFO), None
        )
        return fence, cb

    def launch(
        self,
        loaded: LoadedKernel,
        geometry: Any,
        buffers: Sequence[Any],
        scalars: Sequence[tuple[str, int | float]],
        stream: Any = None,
        wait_events: Sequence[Any] = (),
        signal_event: Any = None,
    ) -> None:
        """Record and submit one dispatch of ``loaded`` over ``geometry`` (asynchronous).

        Raises:
            LaunchError: argument count/dtype mismatch, wrong work-group size, device lost.
        """
        meta = loaded.artifact.metadata
        name = loaded.artifact.kernel_name
        if len(buffers) != len(meta["buffers"]):
            raise LaunchError(
                f"launch {name!r}: expected {len(meta['buffers'])} buffers "
                f"({', '.join(b[0] for b in meta['buffers'])}), got {len(buffers)}"
            )
        if geometry.workgroup_size != meta["workgroup_size"]:
            raise LaunchError(
                f"launch {name!r}: workgroup_size {geometry.workgroup_size} "
                f"differs from the kernel's {meta['workgroup_size']}"
            )
        bufs = [self._check_buffer(b, f"launch {name!r}") for b in buffers]
        groups = int(geometry.groups)
        push = self._push_constants(loaded, scalars, groups)
        if groups <= 0:
            return
        fence, cb = self._command_buffer()
        try:
            self._record(cb, loaded, self._descriptor_set(loaded, bufs), push, groups)
            vk.vkQueueSubmit(
                self._queue,
                1,
                [
                    vk.VkSubmitInfo(
                        sType=vk.VK_STRUCTURE_TYPE_SUBMIT_INFO,
                        commandBufferCount=1,
                        pCommandBuffers=[cb],
                    )
                ],
                fence,
            )
        except vk.VkError as e:
            self._spare.append((fence, cb))
            raise _check(f"launch {name!r}", e) from e
        self._in_flight.append((fence, cb))
        if isinstance(signal_event, _Event):
            signal_event.fence = fence

    def _barrier(self, cb: Any, dst_stage: int, dst_access: int) -> None:
        mb = vk.VkMemoryBarrier(
            sType=vk.VK_STRUCTURE_TYPE_MEMORY_BARRIER,
            srcAccessMask=vk.VK_ACCESS_SHADER_WRITE_BIT | vk.VK_ACCESS_HOST_WRITE_BIT,
            dstAccessMask=dst_access,
        )
        vk.vkCmdPipelineBarrier(
            cb,
            vk.VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | vk.VK_PIPELINE_STAGE_HOST_BIT,
            dst_stage,
            0,
            1,
            [mb],
            0,
            None,
            0,
            None,
        )

    def _record(self, cb: Any, loaded: LoadedKernel, ds: Any, push: bytes, groups: int) -> None:
        vk.vkResetCommandBuffer(cb, 0)
        vk.vkBeginCommandBuffer(
            cb,
            vk.VkCommandBufferBeginInfo(
                sType=vk.VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
                flags=vk.VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT,
            ),
        )
        self._barrier(
            cb,
            vk.VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
            vk.VK_ACCESS_SHADER_READ_BIT | vk.VK_ACCESS_SHADER_WRITE_BIT,
        )
        vk.vkCmdBindPipeline(cb, vk.VK_PIPELINE_BIND_POINT_COMPUTE, loaded.pipeline)
        vk.vkCmdBindDescriptorSets(
            cb, vk.VK_PIPELINE_BIND_POINT_COMPUTE, loaded.pipeline_layout, 0, 1, [ds], 0, None
        )
        data = vk.ffi.new("char[]", push)
        vk.vkCmdPushConstants(
            cb, loaded.pipeline_layout, vk.VK_SHADER_STAGE_COMPUTE_BIT, 0, len(push), data
        )
        limit = int(self._props.limits.maxComputeWorkGroupCount[0])
        for base in range(0, groups, limit):
            count = min(limit, groups - base)
            if base == 0:
                vk.vkCmdDispatch(cb, count, 1, 1)
            else:
                vk.vkCmdDispatchBase(cb, base, 0, 0, count, 1, 1)
        self._barrier(cb, vk.VK_PIPELINE_STAGE_HOST_BIT, vk.VK_ACCESS_HOST_READ_BIT)
        vk.vkEndCommandBuffer(cb)

    def create_stream(self) -> _Stream:
        """Return a stream (all streams share the one in-order compute queue)."""
        return _Stream()

    def create_event(self) -> _Event:
        """Return an event; a launch given it as ``signal_event`` sets its fence."""
        return _Event()

    def synchronize(self, scope: Any = None) -> None:
        """Wait for all submitted work (an event: for its launch and everything before)."""
        if not self._in_flight:
            return
        fences = [f for f, _ in self._in_flight]
        try:
            vk.vkWaitForFences(self._device, len(fences), fences, vk.VK_TRUE, 2**63 - 1)
            vk.vkResetFences(self._device, len(fences), fences)
        except vk.VkError as e:
            self._spare.extend(self._in_flight)
            self._in_flight.clear()
            raise _check("synchronize", e) from e
        self._spare.extend(self._in_flight)
        self._in_flight.clear()
        if isinstance(scope, _Event):
            scope.fence = None

    def destroy(self, obj: Any) -> None:
        """Release a loaded kernel (pipeline, layouts, descriptor pool); streams/events: no-op."""
        if not isinstance(obj, LoadedKernel) or obj.pipeline is None:
            return
        self.synchronize()
        dev = self._device
        for users in self._buffer_users.values():
            users.discard(obj)
        vk.vkDestroyDescriptorPool(dev, obj.descriptor_pool, None)
        vk.vkDestroyPipeline(dev, obj.pipeline, None)
        vk.vkDestroyPipelineLayout(dev, obj.pipeline_layout, None)
        vk.vkDestroyDescriptorSetLayout(dev, obj.set_layout, None)
        vk.vkDestroyShaderModule(dev, obj.module, None)
        obj.pipeline = None
        obj.descriptor_sets.clear()

    def close(self) -> None:
        """Wait, then destroy every buffer kept for reuse, the pools, the device, the instance."""
        if getattr(self, "_device", None) is None:
            return
        self.synchronize()
        self.trim()
        dev = self._device
        for fence, _ in self._spare:
            vk.vkDestroyFence(dev, fence, None)
        self._spare.clear()
        vk.vkDestroyPipelineCache(dev, self._pipeline_cache, None)
        vk.vkDestroyCommandPool(dev, self._command_pool, None)
        vk.vkDeviceWaitIdle(dev)
        self._device = None
