"""Device choice, features and the compile-only backend, on made-up devices (no OpenCL)."""

from __future__ import annotations

import pytest
from accy.errors import BackendUnavailable
from accy_backend_opencl.device import DeviceInfo, choose_device


def _info(index, type_, extensions=("cl_khr_spir",), il="", compiler=True, version=(3, 0),
          fp32_atomic_add=False):
    return DeviceInfo(index=index, platform=f"P{index}", platform_version="OpenCL 3.0 X",
                      name=f"dev{index}", type=type_, driver_version="1.0",
                      opencl_version=version, il_version=il, extensions=frozenset(extensions),
                      compiler=compiler, max_workgroup_size=256, local_memory_bytes=65536,
                      max_allocation_bytes=1 << 30, fp64=True, out_of_order=False,
                      fp32_atomic_add=fp32_atomic_add)


def test_gpu_before_accelerator_before_cpu():
    devices = [(_info(0, "CPU"), None), (_info(1, "ACCELERATOR"), None), (_info(2, "GPU"), None)]
    assert choose_device(devices, None, "llvm-spirv")[0].index == 2
    assert choose_device(devices[:2], None, "llvm-spirv")[0].index == 1


def test_loading_path_per_device():
    assert _info(0, "GPU", ("cl_khr_il_program",)).loading_path(None) == "il"
    assert _info(0, "GPU", (), il="SPIR-V_1.2").loading_path(None) == "il"
    assert _info(0, "CPU", ("cl_khr_spir",)).loading_path("llvm-spirv-15") == "spir"
    assert _info(0, "CPU", ("cl_khr_spir",)).loading_path(None) is None


def test_unusable_devices_are_skipped_or_explained():
    no_bridge = [(_info(0, "GPU", ()), None), (_info(1, "CPU"), None)]
    assert choose_device(no_bridge, None, "llvm-spirv")[0].index == 1
    with pytest.raises(BackendUnavailable, match="needs llvm-spirv-15"):
        choose_device([(_info(0, "CPU"), None)], None, None)
    with pytest.raises(BackendUnavailable, match="has no compiler"):
        choose_device([(_info(0, "CPU", compiler=False), None)], 0, "llvm-spirv")
    with pytest.raises(BackendUnavailable, match="no OpenCL device"):
        choose_device([], None, "llvm-spirv")


def test_features_from_extensions():
    plain = _info(0, "CPU")
    assert plain.features() == {"f64", "i64"}
    rich = _info(0, "GPU", ("cl_khr_int64_base_atomics", "cl_khr_subgroups",
                            "cl_ext_float_atomics", "cl_khr_il_program"), fp32_atomic_add=True)
    assert rich.features() == {"f64", "i64", "int64_atomics", "subgroups",
                               "native_float_atomics"}
    spir_only = _info(0, "CPU", ("cl_khr_spir", "cl_ext_float_atomics"), fp32_atomic_add=True)
    assert "native_float_atomics" not in spir_only.features()  # the translator path: CAS


def test_compile_only_backend_compiles_and_refuses_device_work():
    import opencl_kernels as K
    from accy_backend_opencl.backend import OpenCLBackend

    be = OpenCLBackend(compile_only=True, unavailable_reason="no platform here")
    caps = be.capabilities()
    assert caps.device_name == "compile-only OpenCL SPIR-V" and "f64" in caps.dtypes
    artifact = be.compile(K.scale())
    assert artifact.format == "spirv" and artifact.entry == "accy_scale_f32"
    assert be.emit(K.scale(), "spirv") == artifact.data
    with pytest.raises(BackendUnavailable, match="compile-only here: no platform here"):
        be.allocate(16)
    with pytest.raises(BackendUnavailable, match="compile-only"):
        be.load(artifact)


class _FakeKernel:
    def __init__(self, answer):
        self.answer = answer

    def get_sub_group_info(self, device, what, sizes):
        if isinstance(self.answer, Exception):
            raise self.answer
        return self.answer


class _FakeCL:
    """Just enough of pyopencl for :func:`subgroup_size`."""

    class kernel_sub_group_info:  # noqa: N801 - pyopencl's name
        MAX_SUB_GROUP_SIZE_FOR_NDRANGE = 0x2033

    def __init__(self, answer):
        self.answer = answer

    def Program(self, context, source):  # noqa: N802 - pyopencl's name
        class _Built:
            def build(self):
                return self
        return _Built()

    def Kernel(self, program, name):  # noqa: N802 - pyopencl's name
        return _FakeKernel(self.answer)


def test_subgroup_size_from_the_driver_or_one():
    from accy_backend_opencl.device import subgroup_size

    with_subgroups = _info(0, "GPU", ("cl_khr_subgroups",))
    assert subgroup_size(_FakeCL(32), None, None, with_subgroups) == 32
    assert subgroup_size(_FakeCL(RuntimeError("no")), None, None, with_subgroups) == 1
    assert subgroup_size(_FakeCL(32), None, None, _info(0, "CPU")) == 1
