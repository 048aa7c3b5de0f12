"""Check a compiled module against the backend's target profile before code generation.

Every tensor dtype must be one the backend supports, f64 transcendentals need the
``f64_math`` feature (Vulkan's GLSL.std.450 is 32-bit only), and each kernel's work-group
size, shared memory and buffer count must fit the device. Failures raise
:class:`accy.errors.CapabilityError` / :class:`accy.errors.OutOfResources` naming the op or
kernel, so nothing unsupported ever reaches LLVM.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from accy.errors import CapabilityError, OutOfResources
from accy.ir import Module
from accy.kernel.ir import dtype_bytes
from accy.passes.base import Pass, PassContext

__all__ = ["LegalizePass", "legalize"]

#: ops needing 64-bit transcendental functions (sqrt/rsqrt are exact IEEE ops everywhere).
_F64_MATH_OPS = frozenset({"math.exp", "math.log", "math.tanh", "math.sin", "math.cos",
                           "math.sigmoid", "nn.gelu", "nn.softmax"})


def _check_dtype(profile, dtype: str, what: str) -> None:
    if dtype not in profile.dtypes:
        raise CapabilityError(
            f"{what}: dtype {dtype} is not supported by backend '{profile.backend}' "
            f"(supported: {', '.join(sorted(profile.dtypes))}); cast to a supported dtype first",
            feature=dtype, backend=profile.backend,
        )


def legalize(module: Module, profile) -> None:
    """Raise CapabilityError/OutOfResources for anything ``profile`` cannot run."""
    for fn in module.functions:
        for p in fn.params:
            _check_dtype(profile, p.type.dtype.value, f"@{fn.name} parameter {p.index}")
        for op in fn.walk():
            at = f" (at {op.location})" if op.location else ""
            where = f"'{op.name}' op in @{fn.name}{at}"
            for r in op.results:
                _check_dtype(profile, r.type.dtype.value, where)
            if (op.name in _F64_MATH_OPS and op.results
                    and op.results[0].type.dtype.value == "f64"
                    and "f64_math" not in profile.features):
                raise CapabilityError(
                    f"{where}: f64 {op.name[5:]} is not supported by backend '{profile.backend}' "
                    "(no 64-bit transcendental functions); cast to f32 first",
                    feature="f64_math", backend=profile.backend, alternative="cast to f32",
                )
    for name, k in module.attrs.get("kernels", {}).items():
        if k.workgroup_size > profile.max_workgroup_size:
            raise OutOfResources(
                f"kernel {name}: work-group size {k.workgroup_size} exceeds the device limit "
                f"{profile.max_workgroup_size}",
                resource="workgroup_size", required=k.workgroup_size,
                limit=profile.max_workgroup_size,
            )
        limit = getattr(profile, "max_storage_buffers", None)
        if limit is not None and len(k.buffers) > limit:
            raise OutOfResources(
                f"kernel {name}: binds {len(k.buffers)} buffers, the device allows {limit}",
                resource="storage_buffers", required=len(k.buffers), limit=limit,
            )
        shared = sum(a.size_elems * dtype_bytes(a.dtype) for a in k.shared)
        if shared > profile.shared_memory_bytes:
            raise OutOfResources(
                f"kernel {name}: {shared} bytes of shared memory exceed the device limit "
                f"{profile.shared_memory_bytes}",
                resource="shared_memory_bytes", required=shared, limit=profile.shared_memory_bytes,
            )


@dataclass(frozen=True)
class LegalizePass(Pass):
    """Legalize against ``ctx.target_profile`` (a no-op without a profile)."""

    name: ClassVar[str] = "legalize"
    summary: ClassVar[str] = "check dtypes, f64 math, work-group size and shared memory"

    def run(self, module: Module, ctx: PassContext) -> bool:
        if ctx.target_profile is not None:
            legalize(module, ctx.target_profile)
        return False
