"""OpenCL platforms and devices: what each offers, which one to use, how to load programs.

:class:`DeviceInfo` is a plain snapshot of one ``pyopencl.Device`` (limits, extensions, IL
versions). Devices are listed in enumeration order (platform by platform, as ``clinfo``
shows them); ``ACCY_OPENCL_DEVICE`` picks one by index in that list or by a case-insensitive
substring of ``"<platform> <device>"``. Without it the first usable device of the best type
wins: GPU, then accelerator, then CPU, then anything else.

A device is usable when it has a compiler and one of the two loading paths:

- ``"il"``: ``cl_khr_il_program`` or an OpenCL ≥ 2.1 ``CL_DEVICE_IL_VERSION`` naming SPIR-V
  (``clCreateProgramWithIL``);
- ``"spir"``: ``cl_khr_spir`` and the Khronos translator (:mod:`.bridge`), SPIR 1.2 bitcode.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

from accy.errors import BackendUnavailable

__all__ = ["DeviceInfo", "choose_device", "describe", "list_devices", "subgroup_size"]

_TYPE_RANK = {"GPU": 0, "ACCELERATOR": 1, "CPU": 2}


@dataclass(frozen=True)
class DeviceInfo:
    """A snapshot of one OpenCL device (everything accy reads from it)."""

    index: int
    platform: str
    platform_version: str
    name: str
    type: str
    driver_version: str
    opencl_version: tuple[int, int]
    il_version: str
    extensions: frozenset[str]
    compiler: bool
    max_workgroup_size: int
    local_memory_bytes: int
    max_allocation_bytes: int
    fp64: bool
    out_of_order: bool
    max_subgroups: int = 0
    fp32_atomic_add: bool = False

    @property
    def vendor(self) -> str:
        """Short driver name: ``"pocl"`` for PoCL, else the platform name."""
        if "pocl" in self.platform_version.lower():
            return "pocl"
        return self.platform

    @property
    def label(self) -> str:
        """``"pocl 3.1+debian: pthread-haswell-AMD EPYC"`` (driver, version, device)."""
        return f"{self.vendor} {self.driver_version}: {self.name}"

    def takes_il(self) -> bool:
        """Whether ``clCreateProgramWithIL`` accepts SPIR-V on this device."""
        return "cl_khr_il_program" in self.extensions or "SPIR-V" in self.il_version

    def loading_path(self, translator: str | None) -> str | None:
        """Return ``"il"``, ``"spir"`` (needs ``translator``) or ``None`` (neither)."""
        if self.takes_il():
            return "il"
        if "cl_khr_spir" in self.extensions and translator:
            return "spir"
        return None

    def features(self) -> frozenset[str]:
        """Return the :class:`~accy_backend_opencl.target.OpenCLTarget` feature names."""
        out = {"i64"}
        if self.fp64:
            out.add("f64")
        if "cl_khr_int64_base_atomics" in self.extensions:
            out.add("int64_atomics")
        if "cl_khr_subgroups" in self.extensions or self.max_subgroups > 0:
            out.add("subgroups")  # OpenCL 3.0 reports them without the extension
        if self.fp32_atomic_add and self.takes_il():
            out.add("native_float_atomics")  # OpAtomicFAddEXT needs the IL path
        return frozenset(out)

    def fingerprint(self) -> str:
        """Return a sha256 hex of platform, device, driver and OpenCL versions."""
        text = "|".join((self.platform, self.platform_version, self.name, self.driver_version,
                         ".".join(map(str, self.opencl_version))))
        return hashlib.sha256(text.encode()).hexdigest()


def _version(text: str) -> tuple[int, int]:
    """``"OpenCL 3.0 PoCL ..."`` → ``(3, 0)``."""
    try:
        major, minor = text.split()[1].split(".")[:2]
        return int(major), int(minor)
    except (IndexError, ValueError):
        return (1, 0)


def _type_name(cl: Any, device: Any) -> str:
    t = device.type
    for name in ("GPU", "ACCELERATOR", "CPU"):
        if t & getattr(cl.device_type, name):
            return name
    return "OTHER"


def _info(cl: Any, index: int, platform: Any, device: Any) -> DeviceInfo:
    def get(attribute: str, default: Any) -> Any:
        try:
            return getattr(device, attribute)
        except (cl.Error, AttributeError):
            return default

    queue_props = get("queue_properties", 0)
    sizes = get("max_work_item_sizes", [1])
    return DeviceInfo(
        index=index,
        platform=platform.name.strip(),
        platform_version=platform.version.strip(),
        name=device.name.strip(),
        type=_type_name(cl, device),
        driver_version=device.driver_version.strip(),
        opencl_version=_version(device.version),
        il_version=(get("il_version", "") or "").strip(),
        extensions=frozenset(device.extensions.split()),
        compiler=bool(get("compiler_available", True)),
        max_workgroup_size=min(int(device.max_work_group_size), int(sizes[0])),
        local_memory_bytes=int(device.local_mem_size),
        max_allocation_bytes=int(device.max_mem_alloc_size),
        fp64=bool(get("double_fp_config", 0)),
        out_of_order=bool(queue_props & cl.command_queue_properties.OUT_OF_ORDER_EXEC_MODE_ENABLE),
        max_subgroups=int(get("max_num_sub_groups", 0) or 0),
        fp32_atomic_add=_fp32_atomic_add(cl, device, device.extensions.split()),
    )


_SINGLE_FP_ATOMIC_CAPABILITIES_EXT = 0x4231
_GLOBAL_FP_ATOMIC_ADD_EXT = 1 << 1


def _fp32_atomic_add(cl: Any, device: Any, extensions: list[str]) -> bool:
    """Whether ``cl_ext_float_atomics`` reports atomic add on f32 in ``__global`` memory
    (``CL_DEVICE_SINGLE_FP_ATOMIC_CAPABILITIES_EXT``); unknown answers count as no, and
    float atomics then use the ``cmpxchg`` loop, which every device runs."""
    if "cl_ext_float_atomics" not in extensions:
        return False
    try:
        caps = int(device.get_info(_SINGLE_FP_ATOMIC_CAPABILITIES_EXT))
    except (cl.Error, TypeError, ValueError):
        return False
    return bool(caps & _GLOBAL_FP_ATOMIC_ADD_EXT)


def list_devices(cl: Any) -> list[tuple[DeviceInfo, Any]]:
    """Return every device as ``(info, pyopencl.Device)`` in enumeration order.

    Raises:
        BackendUnavailable: no OpenCL platform (no ICD installed) or the loader failed.
    """
    try:
        platforms = cl.get_platforms()
    except cl.Error as e:
        why = f"no OpenCL platform ({e}); install an ICD such as pocl-opencl-icd"
        raise BackendUnavailable(why, backend="opencl", reason=why) from e
    out = []
    for platform in platforms:
        try:
            devices = platform.get_devices()
        except cl.Error:
            continue
        for device in devices:
            out.append((_info(cl, len(out), platform, device), device))
    return out


_PROBE_SOURCE = "__kernel void accy_subgroup_probe(__global int *x) { x[0] = 0; }"


def subgroup_size(cl: Any, context: Any, device: Any, info: DeviceInfo) -> int:
    """Return the device's subgroup size for a 1-D kernel of the largest work-group, or 1
    without subgroups (``clGetKernelSubGroupInfo`` of a one-line probe kernel; any failure
    answers 1, which only makes tuning ignore subgroup multiples)."""
    if "subgroups" not in info.features():
        return 1
    try:
        program = cl.Program(context, _PROBE_SOURCE).build()
        kernel = cl.Kernel(program, "accy_subgroup_probe")
        size = kernel.get_sub_group_info(
            device, cl.kernel_sub_group_info.MAX_SUB_GROUP_SIZE_FOR_NDRANGE,
            (info.max_workgroup_size,))
        return max(1, int(size))
    except Exception:  # noqa: BLE001 - a device that cannot say has no usable subgroups
        return 1


def describe(info: DeviceInfo, translator: str | None) -> str:
    """One line for listings: index, label, type, OpenCL version, loading path."""
    path = info.loading_path(translator) or "unusable: no SPIR-V IL and no SPIR bridge"
    major, minor = info.opencl_version
    return f"[{info.index}] {info.label} ({info.type}, OpenCL {major}.{minor}, {path})"


def choose_device(
    devices: list[tuple[DeviceInfo, Any]], spec: int | str | None, translator: str | None
) -> tuple[DeviceInfo, Any]:
    """Pick a device: ``spec`` index or name substring, else the best usable one.

    Raises:
        BackendUnavailable: no device, ``spec`` names none, or the chosen one cannot load
            programs (no IL, no SPIR bridge) or has no compiler. The message lists devices.
    """
    listing = "; ".join(describe(i, translator) for i, _ in devices) or "none"
    if not devices:
        raise BackendUnavailable("no OpenCL device", backend="opencl", reason="no OpenCL device")
    if spec is None:
        usable = [d for d in devices if d[0].compiler and d[0].loading_path(translator)]
        if not usable:
            raise _unusable(devices[0][0], translator, listing)
        return min(usable, key=lambda d: (_TYPE_RANK.get(d[0].type, 3), d[0].index))
    if isinstance(spec, int):
        if not 0 <= spec < len(devices):
            raise BackendUnavailable(
                f"ACCY_OPENCL_DEVICE={spec}: no such device; devices: {listing}",
                backend="opencl", reason=f"no OpenCL device {spec}",
            )
        chosen = devices[spec]
    else:
        matches = [d for d in devices if spec.lower() in f"{d[0].platform} {d[0].name}".lower()]
        if not matches:
            raise BackendUnavailable(
                f"ACCY_OPENCL_DEVICE={spec!r} matches no device; devices: {listing}",
                backend="opencl", reason=f"no OpenCL device matches {spec!r}",
            )
        chosen = matches[0]
    if not chosen[0].compiler or not chosen[0].loading_path(translator):
        raise _unusable(chosen[0], translator, listing)
    return chosen


def _unusable(info: DeviceInfo, translator: str | None, listing: str) -> BackendUnavailable:
    if not info.compiler:
        why = f"{info.label} has no compiler"
    elif "cl_khr_spir" in info.extensions and not translator:
        why = (f"{info.label} takes no SPIR-V IL; its SPIR path needs llvm-spirv-15 "
               "(apt install llvm-spirv-15)")
    else:
        why = f"{info.label} takes neither SPIR-V IL nor SPIR 1.2"
    return BackendUnavailable(f"opencl: {why}; devices: {listing}", backend="opencl", reason=why)
