"""Storage buffers of the Vulkan driver: host-visible or device-local with staging (a mixin).

- ``host`` mode (lavapipe, integrated GPUs): buffers live in host-visible, host-coherent
  memory, persistently mapped; ``write``/``read``/``fill``/``copy`` are memcpy after the
  queued work is done.
- ``staging`` mode (a device with memory the host cannot map, or forced with
  ``ACCY_VULKAN_MEMORY=staging`` / ``VulkanBackend(memory="staging")``): buffers are
  device-local and unmapped; ``write``/``read`` go through one host-visible staging buffer
  (grown to the largest transfer) with ``vkCmdCopyBuffer``, ``fill`` is ``vkCmdFillBuffer``
  and ``copy`` is ``vkCmdCopyBuffer``.
- Freed buffers go to a size-keyed free list and are reused first-in first-out, so an
  executable called in a loop gets the same ``VkBuffer`` handles (and descriptor sets, and
  recorded command buffers) back: nothing is created per call in steady state.
- Out of memory: the free list is destroyed and the allocation retried once, then
  ``OutOfResources(resource, required, limit)``; the half-built buffer is destroyed.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import Any

import numpy as np
import vulkan as vk
from accy.errors import LaunchError, OutOfResources

from accy_backend_vulkan.commands import vulkan_error

__all__ = ["BufferMemory", "VulkanBuffer"]

_HOST = vk.VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | vk.VK_MEMORY_PROPERTY_HOST_COHERENT_BIT
_LOCAL = vk.VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT
_USAGE = (
    vk.VK_BUFFER_USAGE_STORAGE_BUFFER_BIT
    | vk.VK_BUFFER_USAGE_TRANSFER_SRC_BIT
    | vk.VK_BUFFER_USAGE_TRANSFER_DST_BIT
)
MEMORY_MODES = ("auto", "host", "staging")


@dataclass(eq=False)
class VulkanBuffer:
    """A storage buffer of ``capacity_bytes`` (``nbytes`` in use); ``view`` maps it (host
    mode) or is ``None`` (device-local, reached through the staging buffer)."""

    buffer: Any
    memory: Any
    nbytes: int
    capacity_bytes: int
    view: np.ndarray | None
    released: bool = False


def separate_memory(memory_properties: Any) -> bool:
    """Return whether the device has device-local memory the host cannot map (discrete GPU)."""
    types = memory_properties.memoryTypes
    return any(
        types[i].propertyFlags & _LOCAL and not types[i].propertyFlags & _HOST
        for i in range(memory_properties.memoryTypeCount)
    )


class BufferMemory:
    """Allocation, transfers and reuse of storage buffers; needs the command mixin."""

    _device: Any
    _memory: Any
    _lost: bool

    def _init_memory(self, mode: str) -> None:
        if mode not in MEMORY_MODES:
            raise LaunchError(
                f"vulkan: memory mode must be one of {', '.join(MEMORY_MODES)}, got {mode!r}"
            )
        self.staging = mode == "staging" or (mode == "auto" and separate_memory(self._memory))
        self._free: dict[int, deque[VulkanBuffer]] = {}
        self._live: dict[int, VulkanBuffer] = {}
        self._staging_buffer: VulkanBuffer | None = None

    def _memory_type(self, bits: int, device_local: bool) -> int:
        wants = [_LOCAL, 0] if device_local else [_HOST]
        for want in wants:
            for i in range(self._memory.memoryTypeCount):
                flags = self._memory.memoryTypes[i].propertyFlags
                if bits >> i & 1 and flags & want == want:
                    return i
        raise OutOfResources(
            f"vulkan: no memory type for {'device-local' if device_local else 'host-visible'} "
            f"storage buffers; set ACCY_VULKAN_MEMORY={'host' if device_local else 'staging'}",
            resource="memory_type",
        )

    def _create(self, capacity: int, device_local: bool) -> VulkanBuffer:
        dev = self._device
        info = vk.VkBufferCreateInfo(
            sType=vk.VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO,
            size=capacity,
            usage=_USAGE,
            sharingMode=vk.VK_SHARING_MODE_EXCLUSIVE,
        )
        handle = vk.vkCreateBuffer(dev, info, None)
        memory = None
        try:
            req = vk.vkGetBufferMemoryRequirements(dev, handle)
            memory = vk.vkAllocateMemory(
                dev,
                vk.VkMemoryAllocateInfo(
                    sType=vk.VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO,
                    allocationSize=req.size,
                    memoryTypeIndex=self._memory_type(req.memoryTypeBits, device_local),
                ),
                None,
            )
            vk.vkBindBufferMemory(dev, handle, memory, 0)
            view = None
            if not device_local:
                mapped = vk.vkMapMemory(dev, memory, 0, capacity, 0)
                view = np.frombuffer(mapped, dtype=np.uint8, count=capacity)
        except BaseException:
            if memory is not None:
                vk.vkFreeMemory(dev, memory, None)
            vk.vkDestroyBuffer(dev, handle, None)
            raise
        buf = VulkanBuffer(handle, memory, capacity, capacity, view)
        self._live[id(buf)] = buf
        return buf

    def _heap_bytes(self) -> int:
        heaps = self._memory.memoryHeaps
        return max(int(heaps[i].size) for i in range(self._memory.memoryHeapCount))

    def allocate(self, nbytes: int) -> VulkanBuffer:
        """Return a storage buffer of ``nbytes`` bytes (reused from freed ones when possible).

        Raises:
            OutOfResources: the device is out of memory even after the free list was released.
            LaunchError: the device was lost.
        """
        if self._lost:
            raise LaunchError("vulkan allocate: the device was lost; the backend must be reopened")
        capacity = max(16, (nbytes + 255) // 256 * 256)
        free = self._free.get(capacity)
        if free:
            buf = free.popleft()  # FIFO: a call loop gets its buffers back in order
            buf.nbytes, buf.released = nbytes, False
            return buf
        for attempt in (0, 1):
            try:
                buf = self._create(capacity, self.staging)
                break
            except vk.VkError as e:
                error = vulkan_error(f"allocate({nbytes})", e)
                if attempt == 0 and isinstance(error, OutOfResources):
                    self.trim()  # release cached buffers, try once more
                    continue
                if isinstance(error, OutOfResources):
                    error.required, error.limit = capacity, self._heap_bytes()
                raise error from e
        buf.nbytes = nbytes
        return buf

    def _check_buffer(self, buf: Any, what: str) -> VulkanBuffer:
        if not isinstance(buf, VulkanBuffer) or buf.released:
            raise LaunchError(
                f"vulkan {what}: expected a live buffer from allocate(), got "
                f"{type(buf).__name__}{' (freed)' if isinstance(buf, VulkanBuffer) else ''}"
            )
        return buf

    def _staging_for(self, nbytes: int) -> VulkanBuffer:
        buf = self._staging_buffer
        if buf is None or buf.capacity_bytes < nbytes:
            if buf is not None:
                self._destroy_buffer(buf)
            capacity = 1 << max(16, (nbytes - 1).bit_length())
            try:
                buf = self._create(capacity, device_local=False)
            except vk.VkError as e:
                raise vulkan_error(f"staging buffer of {capacity} bytes", e) from e
            self._staging_buffer = buf
        return buf

    def _copy_region(self, src: Any, dst: Any, nbytes: int) -> Any:
        region = vk.VkBufferCopy(srcOffset=0, dstOffset=0, size=nbytes)
        return lambda cb: vk.vkCmdCopyBuffer(cb, src, dst, 1, [region])

    def write(self, buf: VulkanBuffer, data: np.ndarray) -> None:
        """Copy ``data``'s bytes to the start of ``buf`` (after outstanding work)."""
        raw = np.ascontiguousarray(data).reshape(-1).view(np.uint8)
        self._check_buffer(buf, "write")
        if buf.view is not None:
            self.synchronize()
            buf.view[: raw.size] = raw
            return
        if raw.size:
            stage = self._staging_for(raw.size)
            self.synchronize()
            stage.view[: raw.size] = raw  # type: ignore[index]
            self._run_once(self._copy_region(stage.buffer, buf.buffer, raw.size), "write")

    def read(self, buf: VulkanBuffer, out: np.ndarray) -> np.ndarray:
        """Copy the first ``out.nbytes`` bytes of ``buf`` into ``out`` and return it."""
        self._check_buffer(buf, "read")
        target = out.reshape(-1).view(np.uint8)
        if buf.view is not None:
            self.synchronize()
            target[:] = buf.view[: out.nbytes]
        elif out.nbytes:
            stage = self._staging_for(out.nbytes)
            self._run_once(self._copy_region(buf.buffer, stage.buffer, out.nbytes), "read")
            target[:] = stage.view[: out.nbytes]  # type: ignore[index]
        return out

    def fill(self, buf: VulkanBuffer, value: int) -> None:
        """Set every byte of ``buf`` to ``value``."""
        self._check_buffer(buf, "fill")
        if buf.view is not None:
            self.synchronize()
            buf.view[: buf.nbytes] = value
            return
        word = (value & 0xFF) * 0x01010101
        size = min(buf.capacity_bytes, (buf.nbytes + 3) // 4 * 4)
        self._run_once(lambda cb: vk.vkCmdFillBuffer(cb, buf.buffer, 0, size, word), "fill")

    def copy(self, src: VulkanBuffer, dst: VulkanBuffer, nbytes: int) -> None:
        """Copy ``nbytes`` bytes from ``src`` to the start of ``dst``."""
        s, d = self._check_buffer(src, "copy"), self._check_buffer(dst, "copy")
        if s.view is not None and d.view is not None:
            self.synchronize()
            d.view[:nbytes] = s.view[:nbytes]
        elif nbytes:
            self._run_once(self._copy_region(s.buffer, d.buffer, nbytes), "copy")

    def free(self, buf: VulkanBuffer) -> None:
        """Return ``buf`` to the free list (destroyed at once after a device loss); never
        raises for a failed earlier launch, so a caller's cleanup always completes."""
        if not isinstance(buf, VulkanBuffer) or buf.released:
            return
        try:
            self.synchronize()
        except Exception:  # noqa: BLE001 - the launch's caller already got the error
            pass
        buf.released = True
        if self._lost:
            self._destroy_buffer(buf)
        else:
            self._free.setdefault(buf.capacity_bytes, deque()).append(buf)

    def _destroy_buffer(self, buf: VulkanBuffer) -> None:
        self._forget_buffer(buf)
        if buf.view is not None:
            vk.vkUnmapMemory(self._device, buf.memory)
        vk.vkDestroyBuffer(self._device, buf.buffer, None)
        vk.vkFreeMemory(self._device, buf.memory, None)
        self._live.pop(id(buf), None)

    def _forget_buffer(self, buf: VulkanBuffer) -> None:
        """Hook: drop descriptor sets naming ``buf`` (the driver overrides it)."""

    def trim(self) -> None:
        """Destroy every freed buffer kept for reuse, and the staging buffer."""
        self.synchronize()
        for bufs in self._free.values():
            for buf in bufs:
                self._destroy_buffer(buf)
        self._free.clear()
        if self._staging_buffer is not None:
            self._destroy_buffer(self._staging_buffer)
            self._staging_buffer = None
