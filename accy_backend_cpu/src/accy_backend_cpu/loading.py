"""Loading a CPU artifact into this process: a linked program with ``dlopen``
(:mod:`accy_backend_cpu.shared_object`), object code into an MCJIT engine (llvmlite, imported
only here); the ctypes prototypes of the kernel entry points.

Every kernel entry is ``void kernel(void **buffers, void *scalars, i32 begin, i32 end,
i32 groups)``.
"""

from __future__ import annotations

import ctypes
import threading
from collections.abc import Sequence
from typing import Any

from accy.errors import LaunchError

from accy_backend_cpu import shared_object

__all__ = ["KERNEL_FN", "RAW_KERNEL_FN", "check_artifact", "library", "mcjit_engine"]

KERNEL_FN = ctypes.CFUNCTYPE(
    None, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int32, ctypes.c_int32, ctypes.c_int32
)
#: the same entry without argument conversion: called with ctypes objects only (the pointer
#: and scalar arrays pass as pointers, c_int32 by value), ~0.5 us less per call than KERNEL_FN
RAW_KERNEL_FN = ctypes.CFUNCTYPE(None)


def check_artifact(target: Any, artifact: Any, formats: tuple[str, ...] = ("obj",)) -> None:
    """Refuse an artifact of another backend or format, or built for another CPU or LLVM.

    Raises:
        LaunchError: naming what does not match.
    """
    if artifact.backend != "cpu" or artifact.format not in formats:
        raise LaunchError(
            f"cpu load: needs a cpu {' or '.join(map(repr, formats))} artifact, got "
            f"{artifact.backend!r} {artifact.format!r}"
        )
    if artifact.metadata.get("target_fingerprint") != target.fingerprint():
        raise LaunchError(
            f"cpu load: artifact {artifact.kernel_name!r} was built for "
            f"another CPU or LLVM ({artifact.metadata.get('cpu')}); recompile"
        )


def mcjit_engine(target: Any, lock: threading.Lock, objects: Sequence[bytes],
                 entries: Sequence[str]) -> tuple[Any, dict[str, int]]:
    """A fresh MCJIT engine for ``target`` holding the object files ``objects`` (added one
    after another under ``lock``); the address of each entry.

    Raises:
        LaunchError: an entry is not in the objects.
    """
    import llvmlite.binding as llvm

    with lock:
        # a process whose host info came from the disk cache has not initialised LLVM
        llvm.initialize_native_target()
        llvm.initialize_native_asmprinter()
        tm = llvm.Target.from_triple(target.triple).create_target_machine(
            cpu=target.cpu, features=target.features, jit=True
        )
        engine = llvm.create_mcjit_compiler(llvm.parse_assembly(""), tm)
        for data in objects:
            engine.add_object_file(llvm.ObjectFileRef.from_data(data))
        engine.finalize_object()
        addresses = {e: engine.get_function_address(e) for e in entries}
    for entry, address in addresses.items():
        if not address:
            raise LaunchError(f"cpu load: entry {entry!r} not found in the object")
    return engine, addresses


def library(artifact: Any, entries: Sequence[str]) -> tuple[Any, dict[str, Any]]:
    """The ``ctypes.CDLL`` of a linked program (``"so"`` artifact) and each entry's function.

    Raises:
        LaunchError: the shared object does not load here or lacks an entry.
    """
    try:
        lib = shared_object.load_library(artifact.data)
        return lib, {e: KERNEL_FN((e, lib)) for e in entries}
    except (OSError, AttributeError) as e:
        raise LaunchError(f"cpu load: the shared object of {artifact.kernel_name!r} "
                          f"does not load here ({e}); recompile") from e
