"""A CPU launch bound once and run many times (:meth:`CpuBackend.bind_launch`).

The small-call plans of :mod:`accy.runtime.fast_call` and the prepared SpMV of
:mod:`accy_kernels.spmv_fast` keep such a launch for as long as they like, from any thread,
so the bound launch owns what its raw addresses point into: the loaded kernel and the
engine (MCJIT) or library that holds its code. Dropping the kernel from a cache, or losing
a race of two threads loading the same kernel, then frees nothing under it; a kernel
destroyed by :meth:`CpuBackend.destroy` makes the next ``run()`` raise ``LaunchError``.
"""

from __future__ import annotations

import ctypes
import functools
from collections.abc import Sequence
from typing import Any

from accy.errors import LaunchError

from accy_backend_cpu.launch_args import check_workgroup, live_kernel, pack_scalars
from accy_backend_cpu.loading import RAW_KERNEL_FN

__all__ = ["bind_launch"]


def bind_launch(pool: Any, loaded: Any, geometry: Any,
                scalars: Sequence[tuple[str, int | float]],
                work: int | None = None) -> tuple[Any, Any]:
    """``(pointers, run)`` of :meth:`CpuBackend.bind_launch` on ``pool`` (its
    :class:`~accy_backend_cpu.threadpool.WorkgroupPool`).

    Raises:
        LaunchError: the kernel was destroyed, a scalar count or dtype mismatch, or the
            wrong work-group size.
    """
    engine = loaded.engine  # then the function (see launch)
    fn = loaded.function
    name, meta = live_kernel(loaded)
    slots = pack_scalars(name, meta, scalars)
    check_workgroup(name, meta, geometry)
    groups = int(geometry.groups)
    pointers = (ctypes.c_void_p * max(1, len(meta["buffers"])))()
    if groups <= 0:
        return pointers, lambda: None
    work = meta["workgroup_size"] * meta.get("work_per_item", 1) if work is None \
        else max(1, -(-int(work) // groups))
    # the bound launch owns its code (the engine): a raw address outliving the loaded
    # kernel (dropped from a cache, or lost in a race of two threads loading the same
    # kernel) would jump into freed memory; and it refuses to run once the kernel was
    # destroyed
    if not pool.parallel(groups, work):
        raw = functools.partial(RAW_KERNEL_FN(ctypes.cast(fn, ctypes.c_void_p).value),
                                pointers, slots, ctypes.c_int32(0), ctypes.c_int32(groups),
                                ctypes.c_int32(groups))

        def run() -> None:
            if loaded.function is None:
                raise LaunchError(f"launch {name!r}: the kernel was destroyed")
            raw()
    else:
        launch = pool.bind_kernel(fn, ctypes.cast(fn, ctypes.c_void_p).value, pointers,
                                  slots, groups, work)

        def run() -> None:
            if loaded.function is None:
                raise LaunchError(f"launch {name!r}: the kernel was destroyed")
            launch()
    run.keep = (loaded, engine)
    return pointers, run
