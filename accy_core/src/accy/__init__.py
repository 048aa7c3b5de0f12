"""accy: a plugin-based compiler framework for accelerators.

Build a tensor program with :class:`Builder` (or parse one with :func:`parse_module`),
compile it with :func:`compile` for a backend (``"cpu"`` by default) and call the result
with numpy arrays. Importing accy loads nothing heavy: LLVM and device drivers are loaded
when a backend is opened.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from accy.errors import AccyError
from accy.ir import Builder, DType, Module, TensorType, parse_module

__version__ = "0.1.0"

if TYPE_CHECKING:
    from accy.runtime import Executable

__all__ = [
    "AccyError", "Builder", "DType", "Module", "TensorType", "__version__", "asarray",
    "compile", "cond", "fori_loop", "from_dlpack", "jit", "parse_module", "scan", "while_loop",
]

_FRONTEND = {"jit", "asarray", "from_dlpack", "DeviceArray", "Jitted"}
_CONTROL_FLOW = {"fori_loop", "while_loop", "scan", "cond"}
# submodules a user reaches as attributes after a bare ``import accy`` (``accy.lax.scan``,
# ``accy.numpy.sum``): imported on first use, as ``import accy.lax`` would
_SUBMODULES = {"lax", "numpy", "dask", "tuning", "profiling", "families", "testing"}


def __getattr__(name: str) -> Any:
    """Load the Python frontend (``jit``, ``asarray``, ``from_dlpack``), the control-flow
    functions and the submodules (``accy.lax``, ``accy.numpy``, ...) on first use."""
    if name in _FRONTEND:
        import accy.frontend as _frontend

        return getattr(_frontend, name)
    if name in _CONTROL_FLOW:  # JAX's structured control flow (also in accy.lax)
        import accy.frontend.control_flow as _cf

        return getattr(_cf, name)
    if name in _SUBMODULES:
        import importlib

        return importlib.import_module(f"accy.{name}")
    raise AttributeError(f"module 'accy' has no attribute {name!r}")


def compile(module: Module, backend: str = "cpu", *, function: str | None = None,
            verify_each: bool = False, use_cache: bool = True, launch: Any = None,
            tuning: bool = True) -> Executable:
    """Compile a tensor IR module for a backend; return an executable to call with numpy arrays.

    The module goes through the six stages (contract, tensor, dispatch, memory, kernel,
    target); every kernel is compiled once (memory and disk caches) and loaded on the
    backend.

    Args:
        module: a tensor IR :class:`Module` (from :class:`Builder` or :func:`parse_module`).
        backend: a backend name that ``accy backends`` lists (``"cpu"``, ``"vulkan"``,
            ``"cuda"``).
        function: the function to compile (default: the module's first function).
        verify_each: verify the IR after every pass (slower; for debugging passes).
        use_cache: return the executable compiled earlier in this process for the same
            module fingerprint, backend, device and options, or build it from the launch
            graph a process stored on disk for them (no pass runs); False: run the passes.
        launch: launch choices that override the tuning cache: kernel name → candidate label
            (``"serial-wg64-ipt1"``) or :class:`accy.tuning.LaunchCandidate`.
        tuning: use the launch choices ``accy tune`` cached (False: the defaults).

    Returns:
        an :class:`accy.runtime.Executable`. Call it with one numpy array per function
        parameter (exactly the declared dtype and shape); it returns a tuple of numpy
        arrays, one per result. ``kernel_count`` counts the kernels and
        ``stage_text(stage)`` prints the IR after a stage.

    Raises:
        InputError: ``module`` is not a Module, has no functions, or the call's inputs do
            not match the parameters (count, dtype, shape).
        VerifyError: the module is malformed, or ``function`` does not name a function.
        BackendUnavailable: unknown backend (with "did you mean"), or it cannot run here.
        CapabilityError: the backend cannot run some op or dtype (f64 on a device
            without it, atomics); the message names the op and an alternative.
        OutOfResources: a kernel needs more shared memory or threads than the device has.
        CodegenError / CompileError: code generation failed (a bug: please report).

    Example:
        >>> import numpy as np, accy
        >>> m = accy.parse_module('''
        ... func @axpy(%a: f32[], %x: f32[4], %y: f32[4]) -> (f32[4]) {
        ...   %0 = tensor.broadcast_to %a {shape = [4]} : (f32[]) -> f32[4]
        ...   %1 = arith.mul %0, %x : (f32[4], f32[4]) -> f32[4]
        ...   %2 = arith.add %1, %y : (f32[4], f32[4]) -> f32[4]
        ...   func.return %2 : (f32[4]) -> ()
        ... }''')
        >>> exe = accy.compile(m, backend="cpu")
        >>> x = np.arange(4, dtype=np.float32)
        >>> exe(np.float32(2), x, np.ones(4, np.float32))
        (array([1., 3., 5., 7.], dtype=float32),)
    """
    from accy.runtime import compile as _compile

    return _compile(module, backend=backend, function=function, verify_each=verify_each,
                    use_cache=use_cache, launch=launch, tuning=tuning)
