"""Split a CPU program into modules that compile in parallel, and pack their object files.

:meth:`CpuBackend.compile_program` emits one LLVM module per part and compiles the parts on
several codegen worker processes at once (:func:`accy.codegen.compile_llvm_many`); LLVM's
optimisation and code generation (~15-70 ms per kernel at O3) is the largest part of a cold
compile of a program with many kernels. The object files travel in one artifact
(:func:`pack_objects`) and are loaded one after another into one JIT engine.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

__all__ = ["KERNEL_WEIGHT", "MIN_PARALLEL_KERNELS", "pack_objects", "partition", "unpack_objects"]

#: fewer distinct kernels than this compile as one module: a second worker's start-up
#: (~0.1-0.3 s) would cost more than the LLVM time it saves
MIN_PARALLEL_KERNELS = 4

#: the fixed LLVM cost of one kernel in characters of kernel text (a kernel's weight is this
#: plus its text length): a 200-character map costs ~20 ms at O3, a 24,000-character blocked
#: matmul ~250 ms
KERNEL_WEIGHT = 2000

T = TypeVar("T")


def partition(items: Sequence[T], weights: Sequence[int], parts: int) -> list[list[T]]:
    """Split ``items`` into at most ``parts`` non-empty groups of similar total weight.

    Greedy longest-processing-time: the heaviest item goes to the lightest group. Groups come
    heaviest first (so a queue of workers starts on the longest), items in each in their
    original order; the result depends only on the inputs.

    Args:
        items: the things to split (kernels).
        weights: one non-negative cost estimate per item (the kernel's text length).
        parts: the wanted number of groups (>= 1).
    """
    parts = max(1, min(parts, len(items)))
    totals = [0] * parts
    members: list[list[int]] = [[] for _ in range(parts)]
    for i in sorted(range(len(items)), key=lambda i: (-weights[i], i)):
        g = min(range(parts), key=lambda g: (totals[g], g))
        totals[g] += weights[i]
        members[g].append(i)
    order = sorted((g for g in range(parts) if members[g]), key=lambda g: (-totals[g], g))
    return [[items[i] for i in sorted(members[g])] for g in order]


def pack_objects(objects: Sequence[bytes]) -> tuple[bytes, list[int]]:
    """One artifact payload for several object files: their bytes end to end, and the sizes."""
    return b"".join(objects), [len(o) for o in objects]


def unpack_objects(data: bytes, sizes: Sequence[int] | None) -> list[bytes]:
    """The object files packed by :func:`pack_objects` (``sizes`` None: ``data`` is one).

    Raises:
        ValueError: the sizes do not add up to ``len(data)`` (a corrupt artifact).
    """
    if sizes is None:
        return [data]
    if sum(sizes) != len(data) or any(s <= 0 for s in sizes):
        raise ValueError(f"object sizes {list(sizes)} do not split {len(data)} bytes")
    out, start = [], 0
    for size in sizes:
        out.append(data[start:start + size])
        start += size
    return out
