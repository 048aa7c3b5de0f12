"""Launch batching, command-buffer reuse, streams and events (mixin of the Vulkan driver).

- Batching: ``launch`` only appends a :class:`PendingLaunch` to its stream; consecutive
  launches are recorded into one primary command buffer, a compute→compute memory barrier
  before each dispatch, and submitted once, when the host needs the results
  (``synchronize``, ``read``/``write``/``fill``/``copy``/``free``) or another stream waits
  on one of its events.
- Re-submission: a recorded command buffer is kept per identical launch sequence (kernel,
  descriptor set = the bound buffers, push-constant bytes, work-group count; at most
  ``_RECORDED_LIMIT``, least recently used dropped) and submitted again without re-recording
  the next time the same sequence is flushed: a compiled executable called in a loop gets
  the same buffers back from the free list, so its sequence repeats. Freeing a descriptor
  set or destroying a kernel drops every kept command buffer (after waiting), so a kept one
  never refers to a dead descriptor set.
- Streams: each has a queue of the compute family (round robin over those the device
  offers) and a timeline semaphore; a submission signals the stream's next value. An event
  is a (stream, value) pair; ``wait_events`` of another stream become semaphore waits of the
  next submission, ``synchronize(event)`` is ``vkWaitSemaphores``. No fences.
- Errors: a failed submit or wait drops the pending and in-flight work (so the buffers of
  the failed call can be freed), maps out-of-memory to ``OutOfResources`` and a lost device
  to ``LaunchError``; after a device loss every launch raises.

Vulkan 1.3 spec sections: 7.4 (timeline semaphores), 7.6 (memory barriers), 6.4 (command
buffer submission and the implicit ordering of a queue's submissions).
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

import vulkan as vk
from accy.errors import LaunchError, OutOfResources

__all__ = ["CommandQueue", "PendingLaunch", "VulkanEvent", "VulkanStream", "vulkan_error"]

_RECORDED_LIMIT = 32
_FOREVER_NS = 2**63 - 1
_SHADER_RW = vk.VK_ACCESS_SHADER_READ_BIT | vk.VK_ACCESS_SHADER_WRITE_BIT
_SRC_STAGES = (
    vk.VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT
    | vk.VK_PIPELINE_STAGE_TRANSFER_BIT
    | vk.VK_PIPELINE_STAGE_HOST_BIT
)
_SRC_ACCESS = (
    vk.VK_ACCESS_SHADER_WRITE_BIT | vk.VK_ACCESS_TRANSFER_WRITE_BIT | vk.VK_ACCESS_HOST_WRITE_BIT
)
_OUT_OF_MEMORY = (vk.VkErrorOutOfDeviceMemory, vk.VkErrorOutOfHostMemory)


def vulkan_error(call: str, error: Exception) -> Exception:
    """Map a ``vulkan`` exception to an accy one (``OutOfResources`` or ``LaunchError``)."""
    if isinstance(error, _OUT_OF_MEMORY):
        kind = "device_memory" if isinstance(error, vk.VkErrorOutOfDeviceMemory) else "memory"
        return OutOfResources(
            f"vulkan {call}: out of memory ({type(error).__name__}); free buffers or use "
            f"smaller inputs",
            resource=kind,
        )
    if isinstance(error, vk.VkErrorDeviceLost):
        return LaunchError(
            f"vulkan {call}: device lost (VkErrorDeviceLost); the backend must be reopened"
        )
    return LaunchError(f"vulkan {call} failed: {type(error).__name__} {error}")


@dataclass(frozen=True)
class PendingLaunch:
    """One dispatch waiting to be recorded: ``key`` identifies its descriptor set."""

    loaded: Any
    descriptor_set: Any
    key: tuple[Any, ...]
    push: bytes
    groups: int


@dataclass(eq=False)
class VulkanStream:
    """An in-order stream: a queue, a timeline semaphore and the not-yet-submitted batch."""

    queue: Any
    semaphore: Any
    submitted: int = 0
    pending: list[PendingLaunch] = field(default_factory=list)
    waits: dict[int, tuple[Any, Any, int]] = field(default_factory=dict)
    destroyed: bool = False


@dataclass(eq=False)
class VulkanEvent:
    """A point in a stream: reached when the stream's semaphore reaches ``value``."""

    stream: VulkanStream | None = None
    value: int = 0


@dataclass(eq=False)
class _Recorded:
    """A command buffer kept for re-submission; busy until ``stream`` reaches ``value``."""

    command_buffer: Any
    stream: VulkanStream | None = None
    value: int = 0


class CommandQueue:
    """Streams, batching and submission; the driver provides ``_device``, ``_queues`` etc."""

    _device: Any
    _queues: list[Any]
    _command_pool: Any
    _props: Any

    def _init_commands(self) -> None:
        self._streams: list[VulkanStream] = []
        self._events: set[VulkanEvent] = set()  # created and not destroyed (live_objects)
        self._in_flight: list[tuple[VulkanStream, int, Any, _Recorded | None]] = []
        self._spare: list[Any] = []
        self._recorded: OrderedDict[tuple[Any, ...], _Recorded] = OrderedDict()
        self._lost = False
        self.stats = {"submits": 0, "recorded": 0, "reused": 0}
        self._default_stream = self.create_stream()

    # streams and events -------------------------------------------------------------------
    def create_stream(self) -> VulkanStream:
        """Return a new in-order stream on the next queue of the compute family."""
        type_info = vk.VkSemaphoreTypeCreateInfo(
            sType=vk.VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO,
            semaphoreType=vk.VK_SEMAPHORE_TYPE_TIMELINE,
            initialValue=0,
        )
        semaphore = vk.vkCreateSemaphore(
            self._device,
            vk.VkSemaphoreCreateInfo(
                sType=vk.VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO, pNext=type_info
            ),
            None,
        )
        stream = VulkanStream(self._queues[len(self._streams) % len(self._queues)], semaphore)
        self._streams.append(stream)
        return stream

    def create_event(self) -> VulkanEvent:
        """Return an event; a launch given it as ``signal_event`` marks its stream there."""
        event = VulkanEvent()
        self._events.add(event)
        return event

    def _stream(self, stream: Any) -> VulkanStream:
        if stream is None:
            return self._default_stream
        if not isinstance(stream, VulkanStream) or stream.destroyed:
            raise LaunchError(
                f"vulkan: expected a live stream from create_stream(), got {type(stream).__name__}"
            )
        return stream

    def _enqueue(
        self,
        launch: PendingLaunch,
        stream: Any,
        wait_events: Any,
        signal_event: Any,
    ) -> None:
        if self._lost:
            raise LaunchError("vulkan launch: the device was lost; the backend must be reopened")
        target = self._stream(stream)
        for event in wait_events:
            self._add_wait(target, event)
        target.pending.append(launch)
        if isinstance(signal_event, VulkanEvent):
            signal_event.stream, signal_event.value = target, target.submitted + 1

    def _add_wait(self, target: VulkanStream, event: Any) -> None:
        if not isinstance(event, VulkanEvent):
            raise LaunchError(f"vulkan launch: wait_events holds a {type(event).__name__}")
        source = event.stream
        if source is None or source is target:
            return  # never signalled, or earlier on the same in-order stream
        if event.value > source.submitted:
            self._flush(source)
        known = target.waits.get(id(source))
        if known is None or known[2] < event.value:
            target.waits[id(source)] = (source, source.semaphore, event.value)

    # recording ----------------------------------------------------------------------------
    def _barrier(self, cb: Any, dst_stage: int, dst_access: int) -> None:
        barrier = vk.VkMemoryBarrier(
            sType=vk.VK_STRUCTURE_TYPE_MEMORY_BARRIER,
            srcAccessMask=_SRC_ACCESS,
            dstAccessMask=dst_access,
        )
        vk.vkCmdPipelineBarrier(cb, _SRC_STAGES, dst_stage, 0, 1, [barrier], 0, None, 0, None)

    def _begin(self, one_time: bool) -> Any:
        if self._spare:
            cb = self._spare.pop()
            vk.vkResetCommandBuffer(cb, 0)
        else:
            cb = vk.vkAllocateCommandBuffers(
                self._device,
                vk.VkCommandBufferAllocateInfo(
                    sType=vk.VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
                    commandPool=self._command_pool,
                    level=vk.VK_COMMAND_BUFFER_LEVEL_PRIMARY,
                    commandBufferCount=1,
                ),
            )[0]
        flags = vk.VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT if one_time else 0
        vk.vkBeginCommandBuffer(
            cb,
            vk.VkCommandBufferBeginInfo(
                sType=vk.VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO, flags=flags
            ),
        )
        return cb

    def _end(self, cb: Any) -> None:
        host_or_transfer = vk.VK_PIPELINE_STAGE_HOST_BIT | vk.VK_PIPELINE_STAGE_TRANSFER_BIT
        access = vk.VK_ACCESS_HOST_READ_BIT | vk.VK_ACCESS_TRANSFER_READ_BIT
        self._barrier(cb, host_or_transfer, access)
        vk.vkEndCommandBuffer(cb)

    def _record(self, launches: list[PendingLaunch], one_time: bool) -> Any:
        cb = self._begin(one_time)
        limit = int(self._props.limits.maxComputeWorkGroupCount[0])
        bound = None
        for ln in launches:
            self._barrier(cb, vk.VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, _SHADER_RW)
            layout = ln.loaded.pipeline_layout
            if bound is not ln.loaded:
                vk.vkCmdBindPipeline(cb, vk.VK_PIPELINE_BIND_POINT_COMPUTE, ln.loaded.pipeline)
                bound = ln.loaded
            vk.vkCmdBindDescriptorSets(
                cb, vk.VK_PIPELINE_BIND_POINT_COMPUTE, layout, 0, 1, [ln.descriptor_set], 0, None
            )
            if ln.push:
                data = vk.ffi.new("char[]", ln.push)
                stages = vk.VK_SHADER_STAGE_COMPUTE_BIT
                vk.vkCmdPushConstants(cb, layout, stages, 0, len(ln.push), data)
            for base in range(0, ln.groups, limit):
                count = min(limit, ln.groups - base)
                if base == 0:
                    vk.vkCmdDispatch(cb, count, 1, 1)
                else:
                    vk.vkCmdDispatchBase(cb, base, 0, 0, count, 1, 1)
        self._end(cb)
        return cb

    def _command_buffer_for(self, launches: list[PendingLaunch]) -> tuple[Any, _Recorded | None]:
        key = tuple((ln.key, ln.push, ln.groups) for ln in launches)
        kept = self._recorded.get(key)
        if kept is not None and not self._busy(kept):
            self._recorded.move_to_end(key)
            self.stats["reused"] += 1
            return kept.command_buffer, kept
        self.stats["recorded"] += 1
        if kept is not None:  # still running: record a one-time copy
            return self._record(launches, one_time=True), None
        kept = _Recorded(self._record(launches, one_time=False))
        self._recorded[key] = kept
        while len(self._recorded) > _RECORDED_LIMIT:
            _, old = self._recorded.popitem(last=False)
            if self._busy(old):
                self._in_flight.append((old.stream, old.value, old.command_buffer, None))
            else:
                self._spare.append(old.command_buffer)
        return kept.command_buffer, kept

    def _busy(self, kept: _Recorded) -> bool:
        if kept.stream is None or kept.value <= 0:
            return False
        return self._semaphore_value(kept.stream) < kept.value

    def _forget_recorded(self) -> None:
        """Drop every kept command buffer (their descriptor sets or pipelines are going away)."""
        self.synchronize()
        for kept in self._recorded.values():
            self._spare.append(kept.command_buffer)
        self._recorded.clear()

    # submission ---------------------------------------------------------------------------
    def _submit(self, stream: VulkanStream, cb: Any, kept: _Recorded | None, call: str) -> None:
        value = stream.submitted + 1
        waits = list(stream.waits.values())
        timeline = vk.VkTimelineSemaphoreSubmitInfo(
            sType=vk.VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO,
            waitSemaphoreValueCount=len(waits),
            pWaitSemaphoreValues=[w[2] for w in waits] or None,
            signalSemaphoreValueCount=1,
            pSignalSemaphoreValues=[value],
        )
        info = vk.VkSubmitInfo(
            sType=vk.VK_STRUCTURE_TYPE_SUBMIT_INFO,
            pNext=timeline,
            waitSemaphoreCount=len(waits),
            pWaitSemaphores=[w[1] for w in waits] or None,
            pWaitDstStageMask=[vk.VK_PIPELINE_STAGE_ALL_COMMANDS_BIT] * len(waits) or None,
            commandBufferCount=1,
            pCommandBuffers=[cb],
            signalSemaphoreCount=1,
            pSignalSemaphores=[stream.semaphore],
        )
        try:
            vk.vkQueueSubmit(stream.queue, 1, [info], None)
        except vk.VkError as e:
            if kept is None:
                self._spare.append(cb)
            self._fail(e)
            raise vulkan_error(call, e) from e
        stream.waits.clear()
        stream.submitted = value
        self.stats["submits"] += 1
        if kept is not None:
            kept.stream, kept.value = stream, value
        self._in_flight.append((stream, value, None if kept is not None else cb, kept))

    def _flush(self, stream: VulkanStream) -> None:
        if not stream.pending:
            return
        launches, stream.pending = stream.pending, []
        try:
            cb, kept = self._command_buffer_for(launches)
        except vk.VkError as e:
            self._fail(e)
            raise vulkan_error("recording a command buffer", e) from e
        self._submit(stream, cb, kept, f"submit of {len(launches)} launch(es)")

    def _run_once(self, record: Any, call: str) -> None:
        """Record ``record(cb)`` (transfers) into a one-time buffer, submit it, wait for it."""
        if self._lost:
            raise LaunchError(f"vulkan {call}: the device was lost; the backend must be reopened")
        self.synchronize()
        try:
            cb = self._begin(one_time=True)
            record(cb)
            self._end(cb)
        except vk.VkError as e:
            self._fail(e)
            raise vulkan_error(call, e) from e
        self._submit(self._default_stream, cb, None, call)
        self.synchronize()

    def _fail(self, error: Exception) -> None:
        """Forget pending and in-flight work after a failed submit or wait."""
        if isinstance(error, vk.VkErrorDeviceLost):
            self._lost = True
        for stream in self._streams:
            stream.pending.clear()
            stream.waits.clear()
        for _, _, cb, _ in self._in_flight:
            if cb is not None:
                self._spare.append(cb)
        self._in_flight.clear()

    def _wait(self, pairs: list[tuple[VulkanStream, int]], call: str) -> None:
        pairs = [(s, v) for s, v in pairs if v > 0]
        if not pairs or self._lost:
            return
        info = vk.VkSemaphoreWaitInfo(
            sType=vk.VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO,
            semaphoreCount=len(pairs),
            pSemaphores=[s.semaphore for s, _ in pairs],
            pValues=[v for _, v in pairs],
        )
        try:
            vk.vkWaitSemaphores(self._device, info, _FOREVER_NS)
        except vk.VkError as e:
            self._fail(e)
            raise vulkan_error(call, e) from e
        self._retire()

    def _semaphore_value(self, stream: VulkanStream) -> int:
        """Return the value ``stream``'s timeline semaphore has reached."""
        return int(vk.vkGetSemaphoreCounterValue(self._device, stream.semaphore))

    def _retire(self) -> None:
        done = {id(s): self._semaphore_value(s) for s in self._streams}
        still = []
        for entry in self._in_flight:
            stream, value, cb, _ = entry
            if value > done.get(id(stream), 0):
                still.append(entry)
            elif cb is not None:
                self._spare.append(cb)
        self._in_flight = still

    def synchronize(self, scope: Any = None) -> None:
        """Submit pending launches and wait: for all streams (``None``), one stream, or an
        event (its launch and everything before it on its stream).

        Raises:
            LaunchError: the device was lost. OutOfResources: the driver ran out of memory.
        """
        if isinstance(scope, VulkanEvent):
            if scope.stream is not None:
                if scope.value > scope.stream.submitted:
                    self._flush(scope.stream)
                self._wait([(scope.stream, scope.value)], "synchronize(event)")
            return
        streams = [self._stream(scope)] if scope is not None else list(self._streams)
        for stream in streams:
            self._flush(stream)
        self._wait([(s, s.submitted) for s in streams], "synchronize")

    def _destroy_stream(self, stream: VulkanStream) -> None:
        if stream.destroyed or stream is self._default_stream:
            return
        self.synchronize(stream)
        self._retire()
        if any(entry[0] is stream for entry in self._in_flight):
            self.synchronize()
        for kept in self._recorded.values():
            if kept.stream is stream:
                kept.stream, kept.value = None, 0
        vk.vkDestroySemaphore(self._device, stream.semaphore, None)
        stream.destroyed = True
        self._streams.remove(stream)

    def _close_commands(self) -> None:
        for kept in self._recorded.values():
            self._spare.append(kept.command_buffer)
        self._recorded.clear()
        if self._spare:
            vk.vkFreeCommandBuffers(self._device, self._command_pool, len(self._spare), self._spare)
        self._spare.clear()
        for stream in self._streams:
            vk.vkDestroySemaphore(self._device, stream.semaphore, None)
        self._streams.clear()
