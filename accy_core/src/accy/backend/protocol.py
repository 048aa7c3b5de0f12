"""The backend protocol: what a device must provide and the values it exchanges with accy.

A backend describes its device with frozen :class:`Capabilities`, exposes the subset that
legalization checks as a :class:`TargetProfile`, turns a kernel (:class:`accy.kernel.Kernel`)
into an :class:`Artifact`, loads it, manages device buffers and launches the loaded kernel
over a 1-D :class:`Geometry`.

Launch arguments follow one fixed order on every backend. Buffers: output buffers, input
buffers, then an optional element-count buffer. Scalars, each a ``(dtype name, value)``
pair: the element count, runtime scalars, then static scalars.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import field
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from accy.errors import CapabilityError
from accy.records import record

if TYPE_CHECKING:
    import numpy as np

__all__ = [
    "API_VERSION",
    "Artifact",
    "Backend",
    "Capabilities",
    "FEATURES",
    "Geometry",
    "TargetProfile",
]

API_VERSION = 1
"""Version of this protocol; a backend descriptor states the one it implements."""

FEATURES = frozenset({"f64", "i64", "float_atomics", "subgroups", "f64_math", "host_memory",
                      "float64_atomics", "int64_atomics", "simd128", "simd256", "simd512",
                      "streams"})
"""Feature names a backend may list in :attr:`Capabilities.features`.

``simd128``/``simd256``/``simd512``: a host backend's widest vector registers in bits (kernel
families size register tiles by it; see ``matmul.blocked``).

``streams``: launches on different streams may run concurrently, and an executable may
spread independent launches over streams, ordering them with events (``wait_events`` /
``signal_event`` of :meth:`Backend.launch`) and waiting with ``synchronize(stream)``. Such a
backend must order ``write``/``fill``/``copy`` before later launches on every stream (e.g.
complete them before returning). Without it, executables use the default stream only
(``stream=None``); streams and events must still work (single-stream backends may treat
them as already complete).

``float_atomics`` is atomic add on f32; ``float64_atomics`` and ``int64_atomics`` are atomic
add on f64 and i64 (separate device features, e.g. Vulkan's shaderBufferFloat64AtomicAdd).
"""

_ALTERNATIVES = {
    "f64": "cast to f32 first",
    "i64": "cast to i32 first",
    "u32": "cast to i32 first",
    "bool": "cast to i32 first",
    "f64_math": "compute the math function in f32",
    "float_atomics": "use a reduction without float atomics",
    "float64_atomics": "use a reduction without f64 atomics",
    "int64_atomics": "use a reduction without 64-bit integer atomics",
    "subgroups": "use a variant without subgroup operations",
    "host_memory": "copy through device buffers instead",
}


@record
class Capabilities:
    """Describe a live device: identity, dtypes, artifact formats, limits and features.

    Attributes:
        backend: backend name (``"cpu"``).
        device_name: human-readable device name.
        device_fingerprint: stable across processes (name + architecture + driver or LLVM
            version); part of every artifact and tuning cache key.
        dtypes: kernel dtype names the device runs (``{"f32", "i32", "bool", ...}``).
        artifact_formats: formats :meth:`Backend.emit` accepts (``("obj", "llvm", "asm")``).
        max_workgroup_size: most work-items in one work-group.
        subgroup_size: work-items in a subgroup (warp, SIMD width); 1 when there is none.
        shared_memory_bytes: workgroup-shared memory per work-group, in bytes.
        features: names from :data:`FEATURES`.
        max_loop_iterations: the most loop iterations one work-item may run in a kernel, all
            its loops together (sequential loops add, nested ones multiply; the lanes of a
            SIMD group share one count, so each loop counts with its longest lane, and each
            execution of a loop also counts the test that leaves it), or None for no limit
            (real GPUs, CPU). Past it the device silently ends the work-item:
            lavapipe/llvmpipe stops at 65535 (Mesa's ``LP_MAX_TGSI_LOOP_ITERATIONS``).
            Kernel families and the kernel stage keep every kernel under it or refuse with
            a ``CapabilityError`` (:func:`accy.families.loop_budget`).
        max_storage_buffers: most buffers one kernel may bind (Vulkan's
            ``maxPerStageDescriptorStorageBuffers``, 32 on lavapipe); ``None``: no limit
            (CPU). Fusion splits regions that would need more (docs/pipeline.md).
    """

    backend: str
    device_name: str
    device_fingerprint: str
    dtypes: frozenset[str]
    artifact_formats: tuple[str, ...]
    max_workgroup_size: int
    subgroup_size: int
    shared_memory_bytes: int
    features: frozenset[str]
    max_loop_iterations: int | None = None
    max_storage_buffers: int | None = None


@record
class TargetProfile:
    """Hold what legalization checks a program against: dtypes, features and limits.

    ``max_storage_buffers``: see :class:`Capabilities`.
    """

    backend: str
    dtypes: frozenset[str]
    features: frozenset[str]
    max_workgroup_size: int
    subgroup_size: int
    shared_memory_bytes: int
    max_loop_iterations: int | None = None  # see Capabilities.max_loop_iterations
    max_storage_buffers: int | None = None

    @classmethod
    def from_capabilities(cls, caps: Capabilities) -> TargetProfile:
        """Return the profile of a device described by ``caps``."""
        return cls(
            backend=caps.backend,
            dtypes=frozenset(caps.dtypes),
            features=frozenset(caps.features),
            max_workgroup_size=caps.max_workgroup_size,
            subgroup_size=caps.subgroup_size,
            shared_memory_bytes=caps.shared_memory_bytes,
            max_loop_iterations=caps.max_loop_iterations,
            max_storage_buffers=caps.max_storage_buffers,
        )

    def supports_dtype(self, dtype: str) -> bool:
        """Return whether kernels on this target may use ``dtype`` (``"f64"``)."""
        return dtype in self.dtypes

    def require_dtype(self, dtype: str, what: str) -> None:
        """Refuse ``dtype`` unless this target supports it; ``what`` names the user of it.

        Raises:
            CapabilityError: ``dtype`` is not in :attr:`dtypes`; the message names ``what``,
                the backend, the supported dtypes and a cast to try.
        """
        if dtype in self.dtypes:
            return
        fix = _ALTERNATIVES.get(dtype, "cast to a supported dtype first")
        raise CapabilityError(
            f"'{what}': dtype {dtype} is not supported by backend '{self.backend}' "
            f"(supported: {', '.join(sorted(self.dtypes))}); {fix}",
            feature=dtype,
            backend=self.backend,
            alternative=fix,
        )

    def require_feature(self, feature: str, what: str) -> None:
        """Refuse ``feature`` (a name from :data:`FEATURES`) unless this target has it.

        Raises:
            CapabilityError: ``feature`` is not in :attr:`features`; the message names
                ``what``, the backend, the features it has and an alternative.
        """
        if feature in self.features:
            return
        fix = _ALTERNATIVES.get(feature, "use a variant that does not need it")
        have = ", ".join(sorted(self.features)) or "none"
        raise CapabilityError(
            f"'{what}': feature {feature} is not supported by backend '{self.backend}' "
            f"(supported: {have}); {fix}",
            feature=feature,
            backend=self.backend,
            alternative=fix,
        )


@record
class Artifact:
    """Hold a compiled kernel: native bytes plus what the loader and launcher need.

    Attributes:
        backend: name of the backend that produced it.
        kernel_name: the kernel's name.
        format: ``"obj"``, ``"ptx"``, ``"spirv"``, ``"recording"``, ...
        data: the artifact bytes (empty when the format carries nothing serialisable).
        entry: symbol or entry-point name to launch.
        metadata: ``workgroup_size``, buffer dtypes, scalar dtypes and backend extras;
            JSON-serialisable for artifacts that go to the disk cache.
    """

    backend: str
    kernel_name: str
    format: str
    data: bytes
    entry: str
    metadata: dict[str, Any] = field(default_factory=dict, hash=False)


@record
class Geometry:
    """Describe a 1-D launch grid: ``groups`` work-groups of ``workgroup_size`` work-items."""

    groups: int
    workgroup_size: int

    @property
    def total_items(self) -> int:
        """Return the number of work-items launched (``groups * workgroup_size``)."""
        return self.groups * self.workgroup_size


@runtime_checkable
class Backend(Protocol):
    """A live device: compile, load, buffers, launch, streams and events.

    Buffers, loaded kernels, streams and events are opaque objects owned by the backend;
    whoever creates one releases it (``free`` / ``destroy``). Backends may also implement
    ``live_objects() -> dict[str, int]``, counts of live objects by kind (at least
    ``kernels``, ``buffers``, ``streams``, ``events``) for leak checks.
    ``write``/``read`` move whole-buffer prefixes (offset 0) of ``data.nbytes``/``out.nbytes``
    bytes. Backends listing ``"host_memory"`` in their features also implement
    :meth:`host_view` and :meth:`import_host` for zero-copy binding; others return ``None``.
    """

    name: str

    def capabilities(self) -> Capabilities:
        """Return the device's capabilities (cheap; may be cached)."""
        ...

    def target_profile(self) -> TargetProfile:
        """Return the profile legalization checks against."""
        ...

    def compile(self, kernel: Any, options: Mapping[str, object] | None = None) -> Artifact:
        """Compile ``kernel`` (an :class:`accy.kernel.Kernel`) into a loadable artifact."""
        ...

    def emit(self, kernel: Any, format: str) -> bytes:
        """Return an ahead-of-time artifact (``"llvm"``, ``"asm"``, ``"obj"``, ...)."""
        ...

    def load(self, artifact: Artifact) -> object:
        """Load ``artifact`` and return an opaque launchable kernel."""
        ...

    def allocate(self, nbytes: int) -> object:
        """Return a new device buffer of ``nbytes`` bytes (contents undefined)."""
        ...

    def write(self, buffer: object, data: np.ndarray) -> None:
        """Copy contiguous host ``data`` into the start of ``buffer``."""
        ...

    def read(self, buffer: object, out: np.ndarray) -> np.ndarray:
        """Copy the start of ``buffer`` into contiguous host ``out`` and return ``out``."""
        ...

    def fill(self, buffer: object, value: int) -> None:
        """Set every byte of ``buffer`` to ``value`` (0..255)."""
        ...

    def copy(self, src: object, dst: object, nbytes: int) -> None:
        """Copy the first ``nbytes`` bytes of ``src`` to the start of ``dst``."""
        ...

    def free(self, buffer: object) -> None:
        """Release ``buffer``."""
        ...

    def launch(
        self,
        loaded: object,
        geometry: Geometry,
        buffers: Sequence[object],
        scalars: Sequence[tuple[str, int | float]],
        stream: object | None = None,
        wait_events: Sequence[object] = (),
        signal_event: object | None = None,
    ) -> None:
        """Launch ``loaded`` over ``geometry`` with arguments in the fixed order."""
        ...

    def create_stream(self) -> object:
        """Return a new in-order stream (queue)."""
        ...

    def create_event(self) -> object:
        """Return a new event a launch can signal or wait for."""
        ...

    def synchronize(self, scope: object | None = None) -> None:
        """Wait for a stream or event, or for all outstanding work when ``scope`` is None."""
        ...

    def destroy(self, obj: object) -> None:
        """Release a loaded kernel, stream or event."""
        ...

    def host_view(self, buffer: object, dtype: Any, shape: tuple[int, ...]) -> np.ndarray | None:
        """Return a zero-copy numpy view of ``buffer``, or None without host memory."""
        ...

    def import_host(self, array: np.ndarray) -> object | None:
        """Wrap a contiguous host array as a buffer without copying, or return None."""
        ...
