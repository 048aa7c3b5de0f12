"""compile → artifacts → load: the driver behind :func:`accy.compile`.

Artifacts are cached in memory (per process) and on disk (``ArtifactCache`` under the
user cache directory, keyed by backend, device fingerprint, kernel fingerprint and accy
version); a corrupt disk entry is discarded and rebuilt.
"""

from __future__ import annotations

import os
import threading
from typing import Any

from accy.errors import InputError, LaunchError
from accy.hashing import sha256
from accy.ir import Module
from accy.runtime.resources import release_all

__all__ = ["artifact_key", "clear_memory_cache", "compile", "compile_kernel", "compile_known",
           "load_all", "load_kernels", "program_key"]

_MEMORY: dict[tuple, Any] = {}
_LOCK = threading.Lock()
_ARTIFACTS: dict[str, Any] = {}


def artifact_key(backend_name: str, device_fingerprint: str, kernel_fingerprint: str) -> str:
    import accy

    text = f"{backend_name}|{device_fingerprint}|{kernel_fingerprint}|{accy.__version__}"
    return sha256(text.encode()).hexdigest()


def _disk_cache():
    from accy.runtime.artifact_cache import enabled_cache

    return enabled_cache()


def compile_kernel(backend: Any, kernel: Any, stats: dict[str, int] | None = None) -> Any:
    """Return the backend artifact for ``kernel``, through the memory and disk caches."""
    caps = backend.capabilities()
    key = artifact_key(backend.name, caps.device_fingerprint, kernel.fingerprint())
    return _cached_artifact(key, lambda: backend.compile(kernel),
                            stats if stats is not None else {})


def _cached_artifact(key: str, build: Any, stats: dict[str, int]) -> Any:
    """The artifact under ``key``: from memory, else from disk, else ``build()`` and stored."""
    art = _ARTIFACTS.get(key)
    if art is not None:
        stats["memory_hits"] = stats.get("memory_hits", 0) + 1
        return art
    cache = _disk_cache()
    art = cache.load(key) if cache is not None else None
    if art is not None:
        stats["disk_hits"] = stats.get("disk_hits", 0) + 1
    else:
        stats["disk_misses"] = stats.get("disk_misses", 0) + 1
        art = build()
        if cache is not None and (art.metadata or {}).get("cacheable", True):
            cache.store(key, art)
    _ARTIFACTS[key] = art
    return art


def program_key(backend_name: str, device_fingerprint: str, kernels: dict[str, Any],
                loops: bool = False, fingerprints: dict[str, str] | None = None) -> str:
    """The cache key of a whole program's object code: every kernel's name and fingerprint
    (and whether the backend's loop driver is in it); ``fingerprints`` may give some of
    them (a stored graph's ``fingerprints``)."""
    known = fingerprints or {}
    # names first: a cached graph's kernels are only read for a fingerprint it lacks
    parts = "\n".join(f"{n} {known.get(n) or kernels[n].fingerprint()}" for n in sorted(kernels))
    if loops:
        parts += "\nloop-driver"
    return artifact_key(backend_name, device_fingerprint,
                        "program:" + sha256(parts.encode()).hexdigest())


def load_kernels(backend: Any, kernels: dict[str, Any], stats: dict[str, int] | None = None,
                 name: str = "program", loops: bool = False,
                 fingerprints: dict[str, str] | None = None) -> dict[str, Any]:
    """Compile (through the memory and disk caches) and load ``kernels``; name → loaded.

    A backend with ``compile_program``/``load_program`` (the CPU) gets the whole program as
    one module and one JIT engine (with ``loops``, its native loop driver too: option
    ``loop_driver``); others get one artifact per kernel (:func:`compile_kernel`).

    Raises:
        BackendError: a load failed (the kernels loaded before it are destroyed first).
    """
    stats = stats if stats is not None else {}
    if not kernels:
        return {}
    if not (hasattr(backend, "compile_program") and hasattr(backend, "load_program")):
        return load_all(backend, {n: compile_kernel(backend, k, stats) for n, k in kernels.items()})
    caps = backend.capabilities()
    key = program_key(backend.name, caps.device_fingerprint, kernels, loops, fingerprints)
    options = {"loop_driver": True} if loops else None

    def build() -> Any:
        return backend.compile_program(list(kernels.values()), options, name=name)

    art = _cached_artifact(key, build, stats)
    try:
        return backend.load_program(art)
    except LaunchError as e:
        cache = _disk_cache()
        if stats.get("disk_hits", 0) == 0 or cache is None:
            raise
        # a checked entry this host cannot load (e.g. a shared object linked against another
        # C library, in a cache directory shared between machines): dropped and rebuilt
        cache.discard(key, f"holds a program this host cannot load ({e})")
        _ARTIFACTS.pop(key, None)
        stats["disk_hits"] -= 1
        return backend.load_program(_cached_artifact(key, build, stats))


def load_all(backend: Any, artifacts: dict[str, Any]) -> dict[str, object]:
    """Load every artifact (name → artifact) on ``backend``; return name → loaded kernel.

    Raises:
        BackendError: a load failed; the kernels loaded before it are destroyed first.
    """
    loaded: dict[str, object] = {}
    try:
        for name, art in artifacts.items():
            loaded[name] = backend.load(art)
    except BaseException:
        release_all(backend, handles=list(loaded.values()))
        raise
    return loaded


def clear_memory_cache() -> None:
    """Forget in-process executables and artifacts (the disk cache stays)."""
    with _LOCK:
        _MEMORY.clear()
        _ARTIFACTS.clear()


def _launch_options(ctx: Any, device: str, launch: Any, tuning: bool) -> None:
    """Let the kernel stage pick launch candidates (explicit ``launch`` first, then the
    cache) and library calls their families' cached candidates (with ``tuning``)."""
    if tuning:
        from accy.tuning.families import family_choices

        ctx.options["family_choices"] = family_choices(device)
    families = {str(k): v for k, v in (launch or {}).items() if "." in str(k)}
    if families:  # "family.variant" → candidate label: library ops of that family
        ctx.options["family_explicit"] = families
    if not tuning and not launch:
        return
    from accy.tuning.cache import launch_resolver

    ctx.options["launch_choices"] = launch_resolver(device, launch, use_cache=tuning)


def _launch_key(launch: Any, tuning: bool) -> tuple:
    explicit = tuple(sorted((k, str(v)) for k, v in (launch or {}).items()))
    return explicit, _tuning_token() if tuning else None


def _tuning_token() -> tuple[int, int]:
    """``accy.tuning.cache.TuningCache().token()`` without importing the tuning package
    (a pipeline-cache hit needs only the file's state): (mtime ns, size), (0, 0) if absent."""
    from accy import config

    try:
        st = os.stat(config.tuning_cache_path_str())
    except OSError:
        return (0, 0)
    return (st.st_mtime_ns, st.st_size)


def _executable(be: Any, graph: Any, final: Any, stats: dict[str, int], stages: Any,
                fn_name: str) -> Any:
    """Load ``graph``'s kernels and wrap them in an executable that owns them (destroyed
    again if making it fails)."""
    from accy.runtime.executable import Executable

    loops = bool(graph.loops)
    kernels, fingerprints = graph.kernels, graph.fingerprints
    loaded = load_kernels(be, kernels, stats, name=fn_name, loops=loops,
                          fingerprints=fingerprints)

    def reload() -> dict[str, Any]:  # after exe.close(): the artifacts are cached
        return load_kernels(be, kernels, None, name=fn_name, loops=loops,
                            fingerprints=fingerprints)

    try:
        return Executable(be, graph, loaded, final, stages=None, cache_stats=stats,
                          restage=stages, loader=reload, owns_kernels=True)
    except BaseException:
        release_all(be, handles=list({id(k): k for k in loaded.values()}.values()))
        raise


def _rebuild_kernels(graph: Any, stages: Any, fn_name: str) -> None:
    """A cached graph whose kernel IR turns out not to decode gets it from the stages."""
    kernels = graph.kernels
    if not hasattr(kernels, "rebuild"):
        return

    def rebuild() -> dict[str, Any]:
        from accy.runtime.graph import graph_from_function

        final = stages(snapshots=False)[-1].module
        return graph_from_function(final, final.function(fn_name)).kernels

    kernels.rebuild = rebuild


def _stages_of(be: Any, backend: str, get_module: Any, launch: Any, tuning: bool,
               verify_each: bool) -> Any:
    """``stages(snapshots=True)``: run the six stages on ``get_module()`` for live backend
    ``be`` (imports the passes: not needed on a pipeline-cache hit)."""

    def stages(snapshots: bool = True) -> list[Any]:
        from accy.passes import PassContext, run_stages

        ctx = PassContext(target_profile=be.target_profile(), backend=backend)
        _launch_options(ctx, be.capabilities().device_fingerprint, launch, tuning)
        return run_stages(get_module(), ctx, until="target", verify_each=verify_each,
                          snapshots=snapshots)

    return stages


def compile_known(module_fingerprint: str, function: str, backend: str,
                  get_module: Any) -> Any | None:
    """The executable that ``compile(module, backend)`` (default options) would return for
    a module known by its fingerprint alone (the jit index, :mod:`accy.frontend.jit_index`):
    from this process's executables, else from the pipeline cache's launch graph; ``None``
    when neither has it (or the disk cache is off). ``get_module()`` returns the module
    itself, called only if ``exe.stages`` or ``exe.module`` are read.

    Raises:
        BackendUnavailable: unknown backend, or its probe says it cannot run here.
        BackendError: loading the program's kernels failed.
    """
    from accy.plugins import open_backend
    from accy.runtime.pipeline_cache import load_graph, pipeline_key

    if _disk_cache() is None:
        return None
    be = open_backend(backend)
    caps = be.capabilities()
    launch_key = _launch_key(None, True)
    key = (module_fingerprint, backend, caps.device_fingerprint, function, False, launch_key)
    with _LOCK:
        hit = _MEMORY.get(key)
    if hit is not None:
        return hit
    graph = load_graph(pipeline_key(module_fingerprint, function, be, (False, launch_key)))
    if graph is None:
        return None
    stages = _stages_of(be, backend, get_module, None, True, False)
    _rebuild_kernels(graph, stages, function)
    exe = _executable(be, graph, None, {"pipeline_hits": 1}, stages, function)
    with _LOCK:
        return _MEMORY.setdefault(key, exe)


def compile(module: Module, backend: str = "cpu", *, function: str | None = None,
            verify_each: bool = False, use_cache: bool = True, launch: Any = None,
            tuning: bool = True) -> Any:
    """Compile ``module`` for ``backend`` and return an :class:`~accy.runtime.Executable`.

    Args:
        module: a verified tensor IR module (builder or :func:`accy.parse_module`).
        backend: a discovered backend name (``accy backends`` lists them).
        function: the function to run (default: the module's first function).
        verify_each: verify the IR after every pass (slower; for debugging passes).
        use_cache: reuse an executable compiled earlier in this process, and the launch graph
            of one compiled by any process (the pipeline cache on disk); False: run the
            passes afresh (the object code may still come from the artifact cache).
        launch: explicit launch choices, kernel name → candidate label (``serial-wg64-ipt1``)
            or :class:`accy.tuning.LaunchCandidate`; and ``"family.variant"`` → a family
            candidate label (``{"scatter.last_write": "wg64-ipt1"}``, ``{"matmul.tiled":
            ...}``) for the program's library ops of that family. They override the tuning
            cache; a label that is not a candidate raises ``InputError``.
        tuning: use the tuning cache's choices (``accy tune``); False: the defaults.

    Raises:
        BackendUnavailable: unknown backend, or its probe says it cannot run here.
        VerifyError: the module is malformed.
        CapabilityError / OutOfResources: the backend cannot run some op or dtype.
        CodegenError / CompileError: code generation failed (a bug: please report).
    """
    from accy.plugins import open_backend
    from accy.runtime.graph import graph_from_function
    from accy.runtime.pipeline_cache import load_graph, pipeline_key, store_graph

    if not isinstance(module, Module):
        raise InputError(f"accy.compile expects an accy.ir.Module, got {type(module).__name__}")
    be = open_backend(backend)
    caps = be.capabilities()
    if not module.functions:
        raise InputError("module has no functions to compile")
    fn_name = function or module.functions[0].name
    module.function(fn_name)
    key = (module.fingerprint(), backend, caps.device_fingerprint, fn_name, verify_each,
           _launch_key(launch, tuning))
    if use_cache:
        with _LOCK:
            hit = _MEMORY.get(key)
        if hit is not None:
            return hit
    # no module.verify() here: the contract stage starts with the verify pass, and a graph
    # from the pipeline cache was built from a module of the same fingerprint that passed it
    options = (verify_each, _launch_key(launch, tuning))
    pkey = None  # use_cache=False runs the passes afresh and stores nothing they made
    if use_cache and _disk_cache() is not None:
        pkey = pipeline_key(key[0], fn_name, be, options)
    graph = load_graph(pkey) if pkey is not None else None
    stats: dict[str, int] = {}

    stages = _stages_of(be, backend, lambda: module, launch, tuning, verify_each)

    final = None
    if graph is not None:
        stats["pipeline_hits"] = 1
        _rebuild_kernels(graph, stages, fn_name)
    else:
        warm_up = getattr(be, "prepare_compile", None)
        if warm_up is not None:
            warm_up()  # e.g. start the codegen worker while the passes run
        # no per-stage snapshots (a copy per stage): exe.stages runs them again if asked
        final = stages(snapshots=False)[-1].module
        graph = graph_from_function(final, final.function(fn_name))
        if pkey is not None:
            store_graph(pkey, graph)
    exe = _executable(be, graph, final, stats, stages, fn_name)
    if use_cache:
        with _LOCK:  # first one in wins: threads that compiled the same module at once
            exe = _MEMORY.setdefault(key, exe)  # all get the executable the cache keeps
    return exe
