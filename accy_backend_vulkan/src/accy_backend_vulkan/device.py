"""Vulkan instance, physical-device selection and logical-device creation (mixin of the driver).

Device choice: ``ACCY_VULKAN_DEVICE`` = an index among the Vulkan 1.3 devices or a
case-insensitive substring of a device name; unset: the first discrete GPU, else integrated,
else virtual, else CPU (lavapipe). An unknown index or name raises ``BackendUnavailable``
listing the devices. Up to four queues of the compute family are created (streams use them
round robin). The pipeline cache starts from the persisted blob of
:mod:`accy_backend_vulkan.pipeline_cache` when its header matches this device. Every
feature the device reports (Vulkan 1.1/1.2/1.3 and, where present,
``VK_EXT_shader_atomic_float``/``float2``) is enabled. ``ACCY_VULKAN_VALIDATION=1`` adds
the Khronos validation layer when installed.
"""

from __future__ import annotations

from typing import Any

import vulkan as vk
from accy import config
from accy.errors import BackendUnavailable

from accy_backend_vulkan import pipeline_cache
from accy_backend_vulkan.target import VulkanTarget

__all__ = ["DeviceSetup", "loop_iteration_limit", "probe_devices", "select_device"]

_DEVICE_RANK = {
    vk.VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: 0,
    vk.VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: 1,
    vk.VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: 2,
    vk.VK_PHYSICAL_DEVICE_TYPE_CPU: 3,
}
_VALIDATION_LAYER = "VK_LAYER_KHRONOS_validation"
_ATOMIC_FLOAT_EXT = "VK_EXT_shader_atomic_float"
_ATOMIC_FLOAT2_EXT = "VK_EXT_shader_atomic_float2"
_MAX_QUEUES = 4
#: loop iterations after which llvmpipe's shader compiler ends a work-item without a word
#: (Mesa gallivm ``LP_MAX_TGSI_LOOP_ITERATIONS``: one count per shader invocation, every loop
#: of the kernel together; measured on lavapipe, Mesa 22.3)
LLVMPIPE_LOOP_LIMIT = 65535


def _name(props: Any) -> str:
    name = props.deviceName
    return name if isinstance(name, str) else vk.ffi.string(name).decode()


def _uuid(props: Any) -> bytes:
    return bytes(bytearray(props.pipelineCacheUUID))


def select_device(described: list[tuple[str, int]], wanted: int | str | None) -> int:
    """Return the index of the device to use among ``described`` = [(name, device type)].

    ``wanted``: an index, a case-insensitive name substring (first match), or ``None`` for
    the first discrete GPU, else integrated, else virtual, else CPU.

    Raises:
        BackendUnavailable: no device, or ``wanted`` names none (the message lists them).
    """
    listing = "; ".join(f"{i}: {name}" for i, (name, _) in enumerate(described)) or "none"
    if not described:
        raise BackendUnavailable(
            "vulkan: no Vulkan 1.3 device", backend="vulkan", reason="no Vulkan 1.3 device"
        )
    if wanted is None:
        ranks = [_DEVICE_RANK.get(kind, 4) for _, kind in described]
        return ranks.index(min(ranks))
    if isinstance(wanted, int):
        if 0 <= wanted < len(described):
            return wanted
        reason = f"ACCY_VULKAN_DEVICE={wanted} is out of range"
    else:
        for i, (name, _) in enumerate(described):
            if wanted.lower() in name.lower():
                return i
        reason = f"ACCY_VULKAN_DEVICE={wanted!r} matches no device name"
    raise BackendUnavailable(
        f"vulkan: {reason}; Vulkan 1.3 devices: {listing}", backend="vulkan", reason=reason
    )


def loop_iteration_limit(device_name: str, driver_id: int | None = None) -> int | None:
    """``Capabilities.max_loop_iterations`` of a device: 65535 on lavapipe (driver id
    ``VK_DRIVER_ID_MESA_LLVMPIPE`` or a device name containing ``llvmpipe``), None (no
    limit) elsewhere."""
    if driver_id == vk.VK_DRIVER_ID_MESA_LLVMPIPE or "llvmpipe" in device_name.lower():
        return LLVMPIPE_LOOP_LIMIT
    return None


class DeviceSetup:
    """Create the instance, pick and open the device; sets ``self.target`` from its features."""

    _physical: Any
    _instance: Any

    def _create_instance(self) -> Any:
        layers = []
        if config.vulkan_validation():
            available = {p.layerName for p in vk.vkEnumerateInstanceLayerProperties()}
            if _VALIDATION_LAYER in available:
                layers.append(_VALIDATION_LAYER)
        app = vk.VkApplicationInfo(
            sType=vk.VK_STRUCTURE_TYPE_APPLICATION_INFO,
            pApplicationName="accy",
            applicationVersion=1,
            pEngineName="accy",
            engineVersion=1,
            apiVersion=vk.VK_MAKE_VERSION(1, 3, 0),
        )
        info = vk.VkInstanceCreateInfo(
            sType=vk.VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO,
            pApplicationInfo=app,
            enabledLayerCount=len(layers),
            ppEnabledLayerNames=layers or None,
        )
        try:
            return vk.vkCreateInstance(info, None)
        except vk.VkError as e:
            raise BackendUnavailable(
                f"vulkan: cannot create an instance: {type(e).__name__}",
                backend="vulkan",
                reason=type(e).__name__,
            ) from e

    def _pick(self, wanted: int | str | None) -> Any:
        devices = [
            d
            for d in vk.vkEnumeratePhysicalDevices(self._instance)
            if vk.vkGetPhysicalDeviceProperties(d).apiVersion >= vk.VK_MAKE_VERSION(1, 3, 0)
        ]
        described = []
        for d in devices:
            props = vk.vkGetPhysicalDeviceProperties(d)
            described.append((_name(props), props.deviceType))
        return devices[select_device(described, wanted)]

    def _create_device(self) -> None:
        pd = self._physical
        self._extensions = {
            e.extensionName for e in vk.vkEnumerateDeviceExtensionProperties(pd, None)
        }
        wanted = [e for e in (_ATOMIC_FLOAT_EXT, _ATOMIC_FLOAT2_EXT) if e in self._extensions]
        chain = None
        self._atomic = self._atomic2 = None
        if _ATOMIC_FLOAT2_EXT in wanted:
            self._atomic2 = chain = vk.VkPhysicalDeviceShaderAtomicFloat2FeaturesEXT(
                sType=vk.VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_ATOMIC_FLOAT_2_FEATURES_EXT
            )
        if _ATOMIC_FLOAT_EXT in wanted:
            self._atomic = chain = vk.VkPhysicalDeviceShaderAtomicFloatFeaturesEXT(
                sType=vk.VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_ATOMIC_FLOAT_FEATURES_EXT,
                pNext=chain,
            )
        f13 = vk.VkPhysicalDeviceVulkan13Features(
            sType=vk.VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES, pNext=chain
        )
        f12 = vk.VkPhysicalDeviceVulkan12Features(
            sType=vk.VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES, pNext=f13
        )
        f11 = vk.VkPhysicalDeviceVulkan11Features(
            sType=vk.VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES, pNext=f12
        )
        self._features = vk.VkPhysicalDeviceFeatures2(
            sType=vk.VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, pNext=f11
        )
        vk.vkGetPhysicalDeviceFeatures2(pd, self._features)
        self._f11, self._f12 = f11, f12
        families = vk.vkGetPhysicalDeviceQueueFamilyProperties(pd)
        compute = [i for i, q in enumerate(families) if q.queueFlags & vk.VK_QUEUE_COMPUTE_BIT]
        if not compute:
            raise BackendUnavailable(
                "vulkan: device has no compute queue", backend="vulkan", reason="no compute queue"
            )
        self._family = compute[0]
        queue_count = max(1, min(_MAX_QUEUES, families[self._family].queueCount))
        queue_info = vk.VkDeviceQueueCreateInfo(
            sType=vk.VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO,
            queueFamilyIndex=self._family,
            queueCount=queue_count,
            pQueuePriorities=[1.0] * queue_count,
        )
        # enable every feature the device has (queried into the same chain)
        info = vk.VkDeviceCreateInfo(
            sType=vk.VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO,
            pNext=self._features,
            queueCreateInfoCount=1,
            pQueueCreateInfos=[queue_info],
            enabledExtensionCount=len(wanted),
            ppEnabledExtensionNames=wanted or None,
        )
        self._device = vk.vkCreateDevice(pd, info, None)
        self._queues = [
            vk.vkGetDeviceQueue(self._device, self._family, i) for i in range(queue_count)
        ]
        self._props = vk.vkGetPhysicalDeviceProperties(pd)
        self._memory = vk.vkGetPhysicalDeviceMemoryProperties(pd)
        self._command_pool = vk.vkCreateCommandPool(
            self._device,
            vk.VkCommandPoolCreateInfo(
                sType=vk.VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
                queueFamilyIndex=self._family,
                flags=vk.VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT,
            ),
            None,
        )
        self._create_pipeline_cache()
        limits = self._props.limits
        self.target = VulkanTarget(
            self._target_features(),
            max_storage_buffers=min(
                limits.maxPerStageDescriptorStorageBuffers,
                limits.maxDescriptorSetStorageBuffers,
                limits.maxPerStageResources,
            ),
            max_push_constant_bytes=limits.maxPushConstantsSize,
            float_controls=self._float_controls(),
        )

    def device_identity(self) -> pipeline_cache.DeviceIdentity:
        """Return what a persisted pipeline cache must match (vendor, device, driver, UUID)."""
        p = self._props
        return pipeline_cache.DeviceIdentity(p.vendorID, p.deviceID, p.driverVersion, _uuid(p))

    def _create_pipeline_cache(self) -> None:
        blob = pipeline_cache.load_blob(self.device_identity())
        self.pipeline_cache_loaded = blob is not None
        for data in (blob, None) if blob is not None else (None,):
            info = vk.VkPipelineCacheCreateInfo(
                sType=vk.VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO,
                initialDataSize=len(data) if data else 0,
                pInitialData=vk.ffi.from_buffer(data) if data else None,
            )
            try:
                self._pipeline_cache = vk.vkCreatePipelineCache(self._device, info, None)
                return
            except vk.VkError:  # the driver refused the blob: start empty
                self.pipeline_cache_loaded = False

    def save_pipeline_cache(self) -> Any:
        """Persist the pipeline cache (atomically); returns the path or ``None``."""
        size = vk.ffi.new("size_t *")
        dev, cache = self._device, self._pipeline_cache
        if vk.lib.vkGetPipelineCacheData(dev, cache, size, vk.ffi.NULL) != vk.VK_SUCCESS:
            return None
        data = vk.ffi.new("char[]", size[0])
        if vk.lib.vkGetPipelineCacheData(dev, cache, size, data) != vk.VK_SUCCESS:
            return None
        return pipeline_cache.save_blob(self.device_identity(), vk.ffi.buffer(data, size[0])[:])

    def _target_features(self) -> frozenset[str]:
        base = self._features.features
        out = set()
        if base.shaderFloat64:
            out.add("f64")
        if base.shaderInt64:
            out.add("i64")
        if self._f12.shaderInt8 and self._f12.storageBuffer8BitAccess:
            out.add("int8")
        if base.shaderInt16 and self._f11.storageBuffer16BitAccess:
            out.add("int16")
        if self._atomic is not None and self._atomic.shaderBufferFloat32AtomicAdd:
            out.add("float_atomics")
        if self._atomic2 is not None and self._atomic2.shaderBufferFloat32AtomicMinMax:
            out.add("float_atomic_minmax")
        if self._atomic is not None and self._atomic.shaderBufferFloat64AtomicAdd:
            out.add("f64_atomics")
        return frozenset(out)

    def _float_controls(self) -> dict[str, frozenset[int]]:
        """Float-controls modes the device supports (VkPhysicalDeviceFloatControlsProperties):
        SignedZeroInfNanPreserve and DenormPreserve, per float width."""
        fc = vk.VkPhysicalDeviceFloatControlsProperties(
            sType=vk.VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FLOAT_CONTROLS_PROPERTIES
        )
        props = vk.VkPhysicalDeviceProperties2(
            sType=vk.VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, pNext=fc
        )
        vk.vkGetPhysicalDeviceProperties2(self._physical, props)
        modes = {
            "SignedZeroInfNanPreserve": (fc.shaderSignedZeroInfNanPreserveFloat32,
                                         fc.shaderSignedZeroInfNanPreserveFloat64),
            "DenormPreserve": (fc.shaderDenormPreserveFloat32, fc.shaderDenormPreserveFloat64),
        }
        out = {}
        for name, (w32, w64) in modes.items():
            widths = frozenset(w for w, ok in ((32, w32), (64, w64)) if ok)
            if widths:
                out[name] = widths
        return out

    def _subgroup_size(self) -> int:
        sub = vk.VkPhysicalDeviceSubgroupProperties(
            sType=vk.VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES
        )
        props = vk.VkPhysicalDeviceProperties2(
            sType=vk.VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, pNext=sub
        )
        vk.vkGetPhysicalDeviceProperties2(self._physical, props)
        return int(sub.subgroupSize) or 1

    def _driver_id(self) -> int | None:
        """``VkPhysicalDeviceDriverProperties.driverID`` (None when it cannot be read)."""
        try:
            drv = vk.VkPhysicalDeviceDriverProperties(
                sType=vk.VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES
            )
            props = vk.VkPhysicalDeviceProperties2(
                sType=vk.VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, pNext=drv
            )
            vk.vkGetPhysicalDeviceProperties2(self._physical, props)
            return int(drv.driverID)
        except (AttributeError, vk.VkError):
            return None


_PROBE: list[Any] = []


def probe_devices(vk_module: Any = vk) -> Any:
    """Return a :class:`ProbeResult`: is there a Vulkan 1.3 device with a compute queue?

    Cached per process; never raises for a missing driver or device (says why instead).
    """
    from accy.backend import ProbeResult

    if _PROBE:
        return _PROBE[0]
    result = ProbeResult(True, "")
    try:
        app = vk_module.VkApplicationInfo(
            sType=vk_module.VK_STRUCTURE_TYPE_APPLICATION_INFO,
            apiVersion=vk_module.VK_MAKE_VERSION(1, 3, 0),
        )
        instance = vk_module.vkCreateInstance(
            vk_module.VkInstanceCreateInfo(
                sType=vk_module.VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO, pApplicationInfo=app
            ),
            None,
        )
    except Exception as e:  # noqa: BLE001 - the reason is the answer
        result = ProbeResult(
            False,
            f"cannot create a Vulkan instance ({type(e).__name__}); "
            "is a Vulkan driver (ICD) installed?",
        )
    else:
        try:
            devices = vk_module.vkEnumeratePhysicalDevices(instance)
            ok = [
                d
                for d in devices
                if vk_module.vkGetPhysicalDeviceProperties(d).apiVersion
                >= vk_module.VK_MAKE_VERSION(1, 3, 0)
            ]
            if not devices:
                result = ProbeResult(False, "no Vulkan physical device")
            elif not ok:
                result = ProbeResult(False, f"{len(devices)} Vulkan device(s), none supports 1.3")
        except Exception as e:  # noqa: BLE001
            result = ProbeResult(False, f"cannot enumerate Vulkan devices ({type(e).__name__})")
        finally:
            vk_module.vkDestroyInstance(instance, None)
    _PROBE.append(result)
    return result
