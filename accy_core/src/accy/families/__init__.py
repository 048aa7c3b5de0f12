"""Kernel-library families: descriptors, registry, runner and host-side validation.

A family (``spmv``, ``sort``, ``gather``) is a named operation with a signature, a
numpy/scipy reference and variants written once in the kernel DSL (see
:mod:`accy.families.family`). Plugins contribute families through the
``accy_kernel_families()`` hook (entry-point group ``accy``); :func:`families` collects them.
A variant runs a call by describing a :class:`Plan` (slots and launches) and running it on a
backend (:mod:`accy.families.runner`). Plan outputs start zeroed on every backend; temporaries
are uninitialised. A variant keeps each work-item's loops under the backend's
``max_loop_iterations`` (:mod:`accy.families.limits`) or refuses with a ``CapabilityError``.

Example::

    from accy.families import families, get_variant

    sorted(families())                       # ['gather', 'random', 'scan', 'sort', ...]
    fam, var = get_variant("spmv.csr_scalar")
"""

from __future__ import annotations

from accy.families.family import Candidate, Family, Role, Signature, Variant, resolve
from accy.families.limits import clamp_tile, loop_budget, loop_passes
from accy.families.registry import (
    families,
    get_family,
    get_variant,
    register_family,
    registry_problems,
    reset,
    variant_runs_on,
)
from accy.families.runner import (
    Plan,
    Slot,
    backend_object,
    host_like,
    split_items,
    split_lanes,
    tile_geometry,
)
from accy.families.validate import (
    IndexOutOfRangeError,
    as_array,
    check_dtype,
    check_indices,
    check_mode,
    kernel_dtype,
    normalize_axis,
)

__all__ = [
    "Candidate",
    "Family",
    "IndexOutOfRangeError",
    "Plan",
    "Role",
    "Signature",
    "Slot",
    "Variant",
    "as_array",
    "backend_object",
    "check_dtype",
    "check_indices",
    "check_mode",
    "clamp_tile",
    "families",
    "get_family",
    "get_variant",
    "host_like",
    "kernel_dtype",
    "loop_budget",
    "loop_passes",
    "normalize_axis",
    "register_family",
    "registry_problems",
    "reset",
    "resolve",
    "split_items",
    "split_lanes",
    "tile_geometry",
    "variant_runs_on",
]
