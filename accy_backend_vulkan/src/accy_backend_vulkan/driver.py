"""VulkanBackend: SPIR-V kernels on a Vulkan device through the cffi ``vulkan`` package.

The backend protocol's class; its parts are mixins, the only modules importing ``vulkan``:

- Device setup, selection and the persisted pipeline cache: :mod:`.device`,
  :mod:`.pipeline_cache`.
- Buffers (host-visible, or device-local with staging copies) and their reuse:
  :mod:`.memory`.
- Launch batching, re-submitted command buffers, streams (queues + timeline semaphores) and
  events: :mod:`.commands`.

Here: capabilities, compilation, pipelines (``load``), descriptor sets (one per kernel and
bound-buffer tuple, cached: reused buffers give reused sets), scalars (push constants or a
scalar buffer, :mod:`.scalars`) and ``launch``, which validates and
queues a dispatch (:meth:`CommandQueue._enqueue`); the runtime's ``synchronize`` submits.
"""

from __future__ import annotations

import atexit
import hashlib
import threading
import weakref
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import vulkan as vk
from accy import config
from accy.backend import Artifact, Capabilities, TargetProfile
from accy.errors import LaunchError, OutOfResources

from accy_backend_vulkan.commands import (
    CommandQueue,
    PendingLaunch,
    VulkanEvent,
    VulkanStream,
    vulkan_error,
)
from accy_backend_vulkan.compiler import EMIT_FORMATS, SpirvCompiler
from accy_backend_vulkan.device import DeviceSetup, loop_iteration_limit, probe_devices
from accy_backend_vulkan.locking import SERIALIZED, serialize_methods
from accy_backend_vulkan.memory import BufferMemory, VulkanBuffer
from accy_backend_vulkan.scalars import ScalarArguments

__all__ = ["VulkanBackend", "VulkanBuffer", "VulkanEvent", "VulkanStream", "probe_devices"]

_DISPATCH_BASE = getattr(vk, "VK_PIPELINE_CREATE_DISPATCH_BASE_KHR", 0x10)
_DESCRIPTOR_CACHE_LIMIT = 64


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
    scalar_buffers: OrderedDict[bytes, Any] = field(default_factory=OrderedDict)


def _save_at_exit(ref: Any) -> None:
    backend = ref()
    if backend is not None and getattr(backend, "_device", None) is not None:
        backend.save_pipeline_cache()


class VulkanBackend(SpirvCompiler, DeviceSetup, CommandQueue, BufferMemory, ScalarArguments):
    """The accy backend protocol on a Vulkan device (see ``accy.backend.protocol``).

    Args:
        device: physical-device index or name substring (default ``ACCY_VULKAN_DEVICE``,
            else the first discrete GPU, else integrated, else CPU).
        validate_spirv: run ``spirv-val`` on each compiled module (default: when installed).
        memory: ``auto``, ``host`` or ``staging`` buffers (default ``ACCY_VULKAN_MEMORY``).

    Raises:
        BackendUnavailable: no Vulkan loader, no device, or ``device`` names none.
    """

    name = "vulkan"

    def __init__(
        self,
        device: int | str | None = None,
        validate_spirv: bool = True,
        memory: str | None = None,
    ) -> None:
        self._api_lock = threading.RLock()
        self.validate_spirv = validate_spirv
        self._buffer_users: dict[int, set[LoadedKernel]] = {}
        self._kernels: set[LoadedKernel] = set()
        self._instance = self._create_instance()
        try:
            self._physical = self._pick(device if device is not None else config.vulkan_device())
            self._create_device()
        except BaseException:
            vk.vkDestroyInstance(self._instance, None)
            raise
        self._init_commands()
        self._init_memory(memory or config.vulkan_memory())
        #: bytes one storage-buffer binding may span (lavapipe: 128 MiB); a launch binding a
        #: larger buffer raises OutOfResources (the shader would not see past it)
        self.max_storage_buffer_range = int(self._props.limits.maxStorageBufferRange)
        self._caps: Capabilities | None = None
        atexit.register(_save_at_exit, weakref.ref(self))

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
            dtypes = self.target.dtypes()
            features = {f for f in ("f64", "i64", "float_atomics") if f in tf}
            if len(self._queues) > 1:
                # transfers wait for every stream before and after (memory.py), so streams
                # on separate queues stay ordered; one queue (lavapipe) would only serialize
                # them again, through more submissions
                features.add("streams")
            self._caps = Capabilities(
                backend="vulkan",
                device_name=name,
                device_fingerprint=hashlib.sha256(ident.encode()).hexdigest(),
                dtypes=frozenset(dtypes),
                artifact_formats=EMIT_FORMATS,
                max_workgroup_size=min(
                    limits.maxComputeWorkGroupInvocations, limits.maxComputeWorkGroupSize[0]
                ),
                subgroup_size=self._subgroup_size(),
                shared_memory_bytes=limits.maxComputeSharedMemorySize,
                features=frozenset(features),
                max_loop_iterations=loop_iteration_limit(name, self._driver_id()),
                max_storage_buffers=self.target.max_storage_buffers,
            )
        return self._caps

    def target_profile(self) -> TargetProfile:
        """Return the :class:`TargetProfile` built from :meth:`capabilities`."""
        return TargetProfile.from_capabilities(self.capabilities())

    def live_objects(self) -> dict[str, int]:
        """Return counts of live Vulkan objects this backend created (leak checks)."""
        return {
            "buffers": len(self._live),
            "free_buffers": sum(len(v) for v in self._free.values()),
            "descriptor_sets": sum(len(k.descriptor_sets) for k in self._kernels),
            "kernels": len(self._kernels),
            "events": len(self._events),
            "streams": len(self._streams),
            "in_flight": len(self._in_flight),
            "command_buffers": len(self._spare) + len(self._recorded) + len(self._in_flight),
        }

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
        spill = meta.get("scalar_binding") is not None  # scalars in a buffer, not pushed
        count = len(meta["buffers"]) + spill
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
                    pushConstantRangeCount=0 if spill else 1,
                    pPushConstantRanges=None if spill else [push],
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
            raise vulkan_error("pipeline creation", e) from e
        loaded = LoadedKernel(
            artifact,
            module,
            set_layout,
            layout,
            pipeline,
            pool,
            list(meta["push_offsets"]),
            meta["push_bytes"],
        )
        self._kernels.add(loaded)
        return loaded

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
            self._forget_recorded()  # kept command buffers may name the evicted set
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
            vk.VkDescriptorBufferInfo(buffer=b.buffer, offset=0,
                                      range=min(b.capacity_bytes, self.max_storage_buffer_range))
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

    def _forget_buffer(self, buf: VulkanBuffer) -> None:
        users = self._buffer_users.pop(id(buf), set())
        if users:
            self._forget_recorded()
        for loaded in users:
            for key in [k for k in loaded.descriptor_sets if id(buf) in k]:
                vk.vkFreeDescriptorSets(
                    self._device, loaded.descriptor_pool, 1, [loaded.descriptor_sets.pop(key)]
                )

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
        """Queue one dispatch of ``loaded`` over ``geometry`` on ``stream`` (asynchronous:
        submitted with the stream's batch at the next ``synchronize`` or buffer access).

        Raises:
            LaunchError: argument count/dtype mismatch, wrong work-group size, device lost.
            OutOfResources: a buffer larger than ``max_storage_buffer_range``.
        """
        meta = loaded.artifact.metadata
        name = loaded.artifact.kernel_name
        if self._lost:
            raise LaunchError(f"launch {name!r}: the device was lost; reopen the backend")
        if loaded.pipeline is None:
            raise LaunchError(f"launch {name!r}: the kernel was destroyed")
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
        self._check_ranges(name, meta, bufs)
        groups = int(geometry.groups)
        if groups <= 0:
            self._pack_scalars(loaded, scalars, groups)  # argument checks still apply
            if isinstance(signal_event, VulkanEvent):  # nothing to run: the event is reached
                target = self._stream(stream)
                signal_event.stream, signal_event.value = target, target.submitted
            return
        push, extra = self._scalar_arguments(loaded, scalars, groups)
        bufs += extra
        try:
            ds = self._descriptor_set(loaded, bufs)
        except vk.VkError as e:
            raise vulkan_error(f"launch {name!r}: descriptor set", e) from e
        key = (id(loaded), *(id(b) for b in bufs))
        self._enqueue(
            PendingLaunch(loaded, ds, key, push, groups), stream, wait_events, signal_event
        )

    def _check_ranges(self, name: str, meta: dict, bufs: list[VulkanBuffer]) -> None:
        """Refuse a buffer larger than one storage-buffer binding may span
        (``maxStorageBufferRange``): the kernel would read zeros and drop writes past it."""
        limit = self.max_storage_buffer_range
        for (bname, *_), b in zip(meta["buffers"], bufs, strict=False):
            if b.nbytes > limit:
                raise OutOfResources(
                    f"launch {name!r}: buffer {bname!r} of {b.nbytes} bytes exceeds the "
                    f"device's maxStorageBufferRange of {limit} bytes (one binding); split "
                    "the array or use a backend without the limit (cpu, opencl)",
                    resource="storage_buffer_range", required=b.nbytes, limit=limit)

    def destroy(self, obj: Any) -> None:
        """Release a loaded kernel (pipeline, layouts, descriptor pool), a stream or an
        event (which holds no Vulkan object; it only stops being counted)."""
        if isinstance(obj, VulkanEvent):
            self._events.discard(obj)
            return
        if isinstance(obj, VulkanStream):
            self._destroy_stream(obj)
            return
        if not isinstance(obj, LoadedKernel) or obj.pipeline is None:
            return
        self._forget_recorded()
        dev = self._device
        self._release_scalar_buffers(obj)
        for users in self._buffer_users.values():
            users.discard(obj)
        vk.vkDestroyDescriptorPool(dev, obj.descriptor_pool, None)
        vk.vkDestroyPipeline(dev, obj.pipeline, None)
        vk.vkDestroyPipelineLayout(dev, obj.pipeline_layout, None)
        vk.vkDestroyDescriptorSetLayout(dev, obj.set_layout, None)
        vk.vkDestroyShaderModule(dev, obj.module, None)
        obj.pipeline = None
        obj.descriptor_sets.clear()
        self._kernels.discard(obj)

    def close(self) -> None:
        """Wait, save the pipeline cache, destroy buffers, pools, the device, the instance."""
        if getattr(self, "_device", None) is None:
            return
        try:
            self.synchronize()
        except Exception:  # noqa: BLE001 - closing a failed device still releases it
            pass
        self.save_pipeline_cache()
        for loaded in list(self._kernels):
            self.destroy(loaded)
        self.trim()
        for buf in list(self._live.values()):
            self._destroy_buffer(buf)
        dev = self._device
        self._close_commands()
        vk.vkDestroyPipelineCache(dev, self._pipeline_cache, None)
        vk.vkDestroyCommandPool(dev, self._command_pool, None)
        vk.vkDeviceWaitIdle(dev)
        vk.vkDestroyDevice(dev, None)
        vk.vkDestroyInstance(self._instance, None)
        self._device = None


serialize_methods(VulkanBackend, SERIALIZED)
