"""CpuTarget: the host as an LLVM target (triple, CPU name and features, O3 with vectorizers).

Pure: no device state. The generator runs in CPU mode (``simt = False``): it builds the
work-group and work-item loops itself (see :mod:`accy.codegen.llvm`). All kernel IR lowers on
the host: f32/f64 math goes to LLVM intrinsics and from there to libm.
"""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING

from accy.codegen.target import GENERATOR_REVISION, BaseTarget
from accy.hashing import sha256

from accy_backend_cpu.host_cache import HostInfo, cached_host, store_host

if TYPE_CHECKING:
    from accy.codegen import CodegenRequest

__all__ = ["CpuTarget", "host_info", "host_machine", "llvm_host_info"]


def llvm_host_info() -> HostInfo:
    """Ask llvmlite for this host's ``(triple, cpu name, feature string, LLVM version)``
    (imports llvmlite and initialises the native target and asm printer)."""
    import llvmlite.binding as llvm

    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    return (
        llvm.get_process_triple(),
        llvm.get_host_cpu_name(),
        llvm.get_host_cpu_features().flatten(),
        tuple(llvm.llvm_version_info),
    )


@cache
def host_info() -> HostInfo:
    """Return ``(triple, cpu name, feature string, LLVM version)`` of this host (cached in
    the process, and on disk by :mod:`accy_backend_cpu.host_cache`, so a process that only
    loads linked programs never imports llvmlite)."""
    info = cached_host()
    if info is None:
        info = llvm_host_info()
        store_host(info)
    return info


def host_machine() -> tuple[str, str, str]:
    """Return ``(triple, cpu name, feature string)`` of this host (cached).

    ``ACCY_CPU_NAME``/``ACCY_CPU_FEATURES`` are not consulted; ahead-of-time builds for other
    CPUs pass ``cpu``/``features`` to :class:`CpuTarget` explicitly.
    """
    return host_info()[:3]


class CpuTarget(BaseTarget):
    """The host CPU target description.

    Args:
        cpu, features: override the host CPU name and feature string (ahead-of-time use).
        opt_level: LLVM optimisation level 0-3 (default 3, loop and SLP vectorization on).
    """

    name = "cpu"
    simt = False

    def __init__(
        self, cpu: str | None = None, features: str | None = None, opt_level: int = 3
    ) -> None:
        triple, host_cpu, host_features = host_machine()
        self.triple = triple
        self.cpu = host_cpu if cpu is None else cpu
        self.features = host_features if features is None else features
        self.opt_level = opt_level

    def math_function(self, op: str, dtype: str) -> str | None:
        """f32 exp/log/tanh → the vectorizable versions of :mod:`accy_backend_cpu.vecmath`."""
        from accy_backend_cpu.vecmath import VECMATH_F32  # code generation only

        if dtype == "f32" and op in VECMATH_F32:
            return VECMATH_F32[op]
        return super().math_function(op, dtype)

    def simd_feature(self) -> str:
        """``simd512`` (AVX-512F), ``simd256`` (AVX) or ``simd128``: the widest vector
        registers the features enable (kernel families size register tiles by it)."""
        feats = set(self.features.split(","))
        if "+avx512f" in feats:
            return "simd512"
        return "simd256" if "+avx" in feats else "simd128"

    def fingerprint(self) -> str:
        """Return a sha256 hex of (cpu, features, LLVM version, accy version)."""
        import accy

        parts = (
            self.triple,
            self.cpu,
            self.features,
            ".".join(map(str, host_info()[3])),
            getattr(accy, "__version__", "0"),
            str(self.opt_level),
            "vecmath-2",
            "scalar-gather-loops-1",  # accy.codegen.llvm.gathering_loops
            GENERATOR_REVISION,
        )
        return sha256("\0".join(parts).encode()).hexdigest()

    def request(self, llvm_ir: str, outputs: tuple[str, ...] = ("obj",)) -> CodegenRequest:
        """Return the worker request compiling ``llvm_ir`` for this CPU."""
        from accy.codegen import CodegenRequest

        return CodegenRequest(
            ir=llvm_ir,
            triple=self.triple,
            cpu=self.cpu,
            features=self.features,
            opt_level=self.opt_level,
            outputs=outputs,
            reloc="pic",
            # small, not jitdefault (large): a large-model object reads its constant pools
            # through _GLOBAL_OFFSET_TABLE_ (GOTOFF64), which MCJIT resolves wrongly for all but
            # the first of a split program's objects in one engine — vector constants read
            # from the wrong place (argsort gave wrong indices, lu segfaulted)
            code_model="small",
        )


def default_num_threads() -> int:
    """Return ``ACCY_NUM_THREADS`` (see ``accy.config``; default ``os.cpu_count()``).

    Raises:
        InputError: the variable is set to something that is not an integer >= 1.
    """
    from accy import config

    return config.num_threads()
