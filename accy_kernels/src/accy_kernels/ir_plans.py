"""IR lowering of the families: append one ``library.*`` call's launches to a plan.

The kernel stage (:mod:`accy.families.lowering`) calls ``plan_fn(plan, backend, call)`` where
``plan`` has :class:`accy.families.Plan`'s ``temp``/``launch`` and ``call`` gives the op's
attributes, operand and result types and their slots (already in the function's memory
plan). ``scatter_add``/``segment_sum`` take the direct calls' device default
(:func:`accy_kernels._dispatch.pick_device_accumulate`: ``privatized`` on a lane device where
the private histograms fit and it has no loop budget or no atomics, else the atomic kernel
where the backend has atomic add on the dtype, else the ``sorted`` formulation: stable radix
sort of the indices in plan temporaries, then one work-item per output summing its run, no
atomics, numpy order); a cached variant (tuning) is taken where it can run. Host programs
keep atomic (the host rule counts the run's pool threads, not the compile's).
Kernels are the families' own (same code as the numpy API); nothing reads host data.
Out-of-range indices (``mode="raise"``) are checked by the executable before launch.

Tuning: where the compile has the tuning cache's family choices (``accy.compile`` with
``tuning=True``), ``sort``/``argsort`` take the cached ``radix`` candidate (tile length),
the prefix sums inside their radix passes the cached ``scan.reduce_then_scan`` candidate
(tile length; key ``i32``, ``n{b(tiles x 256)}``), ``gather`` the ``direct`` work-group
size, ``scatter`` the ``last_write`` work-group size, ``scatter_add``/``segment_sum`` the
``atomic`` work-group size and ``random`` its generator's work-group size, under the same
tuning key as the direct calls (:mod:`accy_kernels.tuning_keys`); the defaults otherwise.
Contractions take the cached ``matmul`` variant and candidate (:mod:`accy_kernels.matmul_ir`).

``sort``/``argsort`` on ``rows x n`` (last axis) with ``rows > 1`` use two stable radix
sorts: argsort of all keys, then a stable sort of the permutation by row (``perm // n``,
as few 8-bit passes as the row count needs); argsort returns ``perm % n``, sort gathers the
keys through the permutation.
"""

from __future__ import annotations

import functools
import math

from accy.families import Candidate, Slot, host_like, tile_geometry
from accy.kernel import KernelBuilder, where

from accy_kernels._common import ceil_div, copy_kernel, fill_kernel, groups_for
from accy_kernels._dispatch import has_atomic_add, require_atomic_add
from accy_kernels.gather_direct import gather_kernel
from accy_kernels.random import squares
from accy_kernels.random.generators import host_items, items_per_request, stream_kernel
from accy_kernels.scan_reduce_then_scan import add_scan
from accy_kernels.scatter_add_atomic import plan_add
from accy_kernels.scatter_add_sorted import launch_sorted_add
from accy_kernels.scatter_last_write import winner_kernel, write_kernel
from accy_kernels.sort_radix import (
    RADIX,
    RADIX_BITS,
    WORKGROUP,
    choose_chunk,
    histogram_kernel,
    key_storage,
    scatter_kernel,
)
from accy_kernels.tuning_keys import bucket, sort_class

__all__ = ["argsort", "gather", "random", "scatter", "scatter_add", "segment_sum", "sort"]

WG = 256


def _split(shape, axis):
    return (math.prod(shape[:axis]), shape[axis], math.prod(shape[axis + 1:]))


def _empty(plan, call) -> None:
    """An empty result: a launch of no work-groups, so the output still counts as written."""
    dtype = call.out_type.dtype.value
    plan.launch(fill_kernel(dtype, WG), 0, [call.output], [("i32", 0), (dtype, 0)])


def gather(plan, backend, call) -> None:
    src, idx = call.inputs
    st, it = call.in_types
    outer, n, inner = _split(st.shape, call.attrs["axis"])
    total = call.out_type.num_elements
    if total == 0:
        return _empty(plan, call)
    cand = _tuned(backend, "gather", "direct", f"{st.dtype.value}+{it.dtype.value}",
                  f"n{bucket(total)}")
    wg = cand.workgroup_size if cand is not None else WG
    k = gather_kernel(st.dtype.value, it.dtype.value, call.attrs["mode"],
                      outer == 1 and inner == 1, wg)
    plan.launch(k, groups_for(total, wg), [call.output, src, idx],
                [("i32", total), ("i32", it.num_elements), ("i32", inner), ("i32", n)])


def scatter(plan, backend, call) -> None:
    dst, idx, vals = call.inputs
    dt, it, vt = call.in_types
    _, n, inner = _split(dt.shape, call.attrs["axis"])
    dtype, idt, mode, m = dt.dtype.value, it.dtype.value, call.attrs["mode"], it.num_elements
    winner = plan.temp("i32", n)
    if not dt.num_elements:
        return _empty(plan, call)
    cand = _tuned(backend, "scatter", "last_write", f"{dtype}+{idt}",
                  f"n{bucket(vt.num_elements)}-d{bucket(dt.num_elements)}")
    wg = cand.workgroup_size if cand is not None else WG
    plan.launch(copy_kernel(dtype, wg), groups_for(dt.num_elements, wg), [call.output, dst],
                [("i32", dt.num_elements)])
    if vt.num_elements == 0:
        return
    plan.launch(fill_kernel("i32", wg), groups_for(n, wg), [winner], [("i32", n), ("i32", -1)])
    plan.launch(winner_kernel(idt, mode, wg), groups_for(m, wg), [winner, idx],
                [("i32", m), ("i32", n)])
    plan.launch(write_kernel(dtype, idt, mode, wg), groups_for(vt.num_elements, wg),
                [call.output, vals, idx, winner],
                [("i32", vt.num_elements), ("i32", m), ("i32", inner), ("i32", n)])


@functools.cache
def _sort_key_kernel(index_dtype: str):
    """``keys[i] = idx[i] (+ n when negative)`` as u32 (indices range-checked before)."""
    kb = KernelBuilder(f"scatter_add_sort_keys_{index_dtype}_wg{WG}", WG)
    keys, idx = kb.buffer("keys", "u32", "write"), kb.buffer("idx", index_dtype, "read")
    m, n = kb.scalar("m", "i32"), kb.scalar("n", "i32")
    g = kb.global_id()
    with kb.if_(g < m):
        i = kb.let("i", idx[g].cast("i64"))
        kb.store(keys, g, where(i < 0, i + n.cast("i64"), i).cast("u32"))
    return kb.build()


def _sorted_add(plan, backend, out, dst, vals, idx, shape, axis, idt, dtype, m) -> None:
    """``scatter_add.sorted`` in the plan (no atomics, numpy.add.at's summation order): stable
    radix sort of the normalized indices carrying their positions, then one work-item per
    output summing its run; ``dst`` None starts from 0."""
    _, n, inner = _split(shape, axis)
    size = math.prod(shape)
    keys, skeys, order = plan.temp("u32", m), plan.temp("u32", m), plan.temp("i32", m)
    plan.launch(_sort_key_kernel(idt), groups_for(m, WG), [keys, idx], [("i32", m), ("i32", n)])
    passes = max(1, ceil_div(max(1, n - 1).bit_length(), RADIX_BITS))
    _radix(plan, backend, keys, "u32", False, m, passes, "iota", skeys, order)
    slots = [out] + ([dst] if dst is not None else [])
    slots += [vals, Slot(skeys.index, "i32", skeys.size_elems), order]
    # the data are unknown here: a run may hold every index (a loop budget splits it)
    launch_sorted_add(plan, backend, slots, dst is not None, dtype, size, n, inner, m, m, WG)


def _add(plan, backend, out, vals, idx, shape, axis, idt, dtype, m, total, wg=WG) -> None:
    outer, n, inner = _split(shape, axis)
    if total == 0:
        return
    plan_add(plan, host_like(backend), [out, vals, idx], dtype, idt, (outer, m, inner, n), wg)


def _accumulate_variant(backend, family: str, dtype: str, idt: str, size: int,
                        total: int) -> tuple[str, str]:
    """The variant of a scatter_add/segment_sum call and its tuning key's shape class: the
    tuning cache's variant where it runs here, else the direct calls' default
    (:func:`accy_kernels._dispatch.pick_accumulate`: on a host backend private histograms,
    one per thread of the compiling backend, where they pay off; a jitted 16M-value
    ``bincount`` into 65,536 bins took 191-202 ms of CPU time with atomics, 117 ms so)."""
    from accy_kernels._dispatch import pick_accumulate

    shape_class = f"n{bucket(total)}-d{bucket(size)}"
    look = getattr(backend, "family_variant", None)
    var = look(family, f"{dtype}+{idt}", shape_class) if look is not None else None
    name = var.name if var is not None else None
    explicit = getattr(backend, "explicit_choice", lambda f: None)(family)
    if explicit is not None:  # asked for: refused where it cannot run
        if name == "atomic":
            require_atomic_add(family, name, dtype, backend)
        return name, shape_class
    if name == "atomic" and not has_atomic_add(backend, dtype):
        name = None
    if name == "privatized" and not _privatized_fits(backend, size, total):
        name = None
    if name is None:
        name = pick_accumulate(backend, dtype, size, total)
    return name, shape_class


def _privatized_fits(backend, size: int, total: int) -> bool:
    from accy.errors import CapabilityError

    from accy_kernels.scatter_add_privatized import choose_tiles

    try:
        choose_tiles(backend, Candidate(256), size, total)
    except CapabilityError:
        return False
    return True


def _privatized(plan, backend, family, out, dst, vals, idx, shape, axis, dtype, idt, m,
                total, shape_class) -> None:
    from accy_kernels.scatter_add_privatized import plan_privatized

    cand = _tuned(backend, family, "privatized", f"{dtype}+{idt}", shape_class)
    plan_privatized(plan, backend, cand or Candidate(256), out, dst, vals, idx, None, shape,
                    axis, dtype, idt, total, m)


def scatter_add(plan, backend, call) -> None:
    dst, idx, vals = call.inputs
    dt, it, vt = call.in_types
    if not dt.num_elements:
        return _empty(plan, call)
    dtype, idt, m, total = dt.dtype.value, it.dtype.value, it.num_elements, vt.num_elements
    axis = call.attrs["axis"]
    name, shape_class = _accumulate_variant(backend, "scatter_add", dtype, idt,
                                            dt.num_elements, total)
    if m and total and name == "sorted":
        return _sorted_add(plan, backend, call.output, dst, vals, idx, dt.shape, axis, idt,
                           dtype, m)
    if m and total and name == "privatized":
        return _privatized(plan, backend, "scatter_add", call.output, dst, vals, idx,
                           dt.shape, axis, dtype, idt, m, total, shape_class)
    plan.launch(copy_kernel(dtype, WG), groups_for(dt.num_elements, WG),
                [call.output, dst], [("i32", dt.num_elements)])
    cand = _tuned(backend, "scatter_add", "atomic", f"{dtype}+{idt}", shape_class)
    _add(plan, backend, call.output, vals, idx, dt.shape, axis, idt, dtype, m, total,
         cand.workgroup_size if cand is not None else WG)


def segment_sum(plan, backend, call) -> None:
    vals, ids = call.inputs
    vt, it = call.in_types
    ot = call.out_type
    dtype, idt, m, total = vt.dtype.value, it.dtype.value, it.num_elements, vt.num_elements
    name, shape_class = _accumulate_variant(backend, "segment_sum", dtype, idt,
                                            ot.num_elements, total)
    if ot.num_elements and m and total and name == "sorted":
        return _sorted_add(plan, backend, call.output, None, vals, ids, ot.shape, 0, idt,
                           dtype, m)
    if ot.num_elements and m and total and name == "privatized":
        return _privatized(plan, backend, "segment_sum", call.output, None, vals, ids,
                           ot.shape, 0, dtype, idt, m, total, shape_class)
    plan.launch(fill_kernel(dtype, WG), groups_for(ot.num_elements, WG), [call.output],
                [("i32", ot.num_elements), (dtype, 0)])
    cand = _tuned(backend, "segment_sum", "atomic", f"{dtype}+{idt}", shape_class)
    _add(plan, backend, call.output, vals, ids, ot.shape, 0, idt, dtype, m, total,
         cand.workgroup_size if cand is not None else WG)


def random(plan, backend, call) -> None:
    a = call.attrs
    dtype, size = call.out_type.dtype.value, call.out_type.num_elements
    if size == 0:
        return _empty(plan, call)
    seed = int(a["seed"]) & ((1 << 64) - 1)
    per_item = items_per_request(a["algorithm"], "uniform", dtype)
    cand = _tuned(backend, "random", a["algorithm"].split("-")[0], dtype,
                  f"n{bucket(size)}-{a['algorithm']}-uniform")
    wg = cand.workgroup_size if cand is not None else WG
    items = host_items(backend, "uniform")
    kernel = stream_kernel(a["algorithm"], "uniform", dtype, wg, items)
    plan.launch(kernel, groups_for(ceil_div(ceil_div(size, per_item), items), wg),
                [call.output], [
        ("i64", int(a["offset"])), ("i64", squares.signed_key(squares.derive_key(seed))),
        ("i32", size), ("u32", seed & 0xFFFFFFFF), ("u32", seed >> 32),
        (dtype, float(a["low"])), (dtype, float(a["high"]) - float(a["low"]))])


def _tuned(backend, family: str, variant: str, dtypes: str, shape_class: str):
    """The tuning cache's candidate for a library call (None: the default)."""
    look = getattr(backend, "family_candidate", None)
    return look(family, variant, dtypes, shape_class) if look is not None else None


def _radix(plan, backend, keys: Slot, dtype: str, descending: bool, n: int, passes: int,
           vals: Slot | str | None, keys_out: Slot | None, vals_out: Slot | None,
           candidate: Candidate | None = None) -> None:
    """LSD radix passes as ``sort_radix.run``; ``vals``: a carried i32 slot, ``"iota"`` or
    None; results in ``keys_out`` (key storage) and ``vals_out`` (i32); ``candidate``
    (``sort.radix``'s) sets the tile length (default: ``Candidate(64)``, about 256 tiles)."""
    st = key_storage(dtype)
    chunk = choose_chunk(n, candidate or Candidate(64), backend)
    tiles = max(1, ceil_div(n, chunk))
    groups, stride = tile_geometry(backend, tiles, WORKGROUP)
    counts, hist = plan.temp("i32", tiles * RADIX), plan.temp("i32", tiles * RADIX)
    scan = _tuned(backend, "scan", "reduce_then_scan", "i32", sort_class(tiles * RADIX))
    scan_chunk = scan.items_per_thread if scan is not None else None
    offsets = plan.temp("i32", tiles * RADIX)
    ping = [plan.temp(st, n), plan.temp(st, n)]
    carry = vals is not None
    vping = [plan.temp("i32", n), plan.temp("i32", n)] if carry else [None, None]
    src_k, src_v = keys, (vals if isinstance(vals, Slot) else None)
    for p in range(passes):
        last = p == passes - 1
        scalars = [("i32", n), ("i32", chunk), ("i32", stride), ("i32", tiles),
                   ("i32", p * RADIX_BITS)]
        plan.launch(histogram_kernel(dtype, descending), groups, [hist, counts, src_k], scalars)
        add_scan(plan, backend, hist, offsets, tiles * RADIX, "i32", inclusive=False,
                 chunk=scan_chunk)
        dst_k = keys_out if last else ping[p % 2]
        dst_v = vals_out if last else vping[p % 2]
        vmode = "none" if not carry else ("iota" if p == 0 and vals == "iota" else "carry")
        kernel = scatter_kernel(dtype, descending, vmode, "i32", "i32", dst_k is not None)
        slots = [s for s in (dst_k, dst_v if vmode != "none" else None) if s is not None]
        slots += [counts, src_k] + ([src_v] if vmode == "carry" else []) + [offsets]
        plan.launch(kernel, groups, slots, scalars)
        src_k, src_v = (dst_k if dst_k is not None else ping[p % 2]), dst_v


@functools.cache
def _row_key_kernel():
    kb = KernelBuilder(f"sort_row_key_wg{WG}", WG)
    rk, perm = kb.buffer("rk", "u32", "write"), kb.buffer("perm", "i32", "read")
    total, n = kb.scalar("total", "i32"), kb.scalar("n", "i32")
    g = kb.global_id()
    with kb.if_(g < total):
        kb.store(rk, g, (perm[g] / n).cast("u32"))
    return kb.build()


@functools.cache
def _finish_kernel(st: str, argsort: bool):
    kb = KernelBuilder(f"sort_rows_finish_{'arg' if argsort else st}_wg{WG}", WG)
    out = kb.buffer("out", "i32" if argsort else st, "write")
    keys = None if argsort else kb.buffer("keys", st, "read")
    perm = kb.buffer("perm", "i32", "read")
    total, n = kb.scalar("total", "i32"), kb.scalar("n", "i32")
    g = kb.global_id()
    with kb.if_(g < total):
        if argsort:
            kb.store(out, g, perm[g] % n)
        else:
            kb.store(out, g, keys[perm[g]])
    return kb.build()


def _sort(plan, backend, call, argsort: bool) -> None:
    (x,) = call.inputs
    (xt,) = call.in_types
    dtype, total = xt.dtype.value, xt.num_elements
    if total == 0:
        return _empty(plan, call)
    n = xt.shape[-1]
    rows = total // n
    st = key_storage(dtype)
    passes = (64 if st == "i64" else 32) // RADIX_BITS
    keys = Slot(x.index, st, total)
    out = Slot(call.output.index, "i32" if argsort else st, total)
    desc = bool(call.attrs["descending"])
    cand = _tuned(backend, "argsort" if argsort else "sort", "radix", dtype, sort_class(total))
    if rows == 1:
        if argsort:
            _radix(plan, backend, keys, dtype, desc, n, passes, "iota", None, out, cand)
        else:
            _radix(plan, backend, keys, dtype, desc, n, passes, None, out, None, cand)
        return
    perm1, perm2 = plan.temp("i32", total), plan.temp("i32", total)
    row_key = plan.temp("u32", total)
    _radix(plan, backend, keys, dtype, desc, total, passes, "iota", None, perm1, cand)
    plan.launch(_row_key_kernel(), groups_for(total, WG), [row_key, perm1],
                [("i32", total), ("i32", n)])
    row_passes = max(1, ceil_div((rows - 1).bit_length(), RADIX_BITS))
    _radix(plan, backend, row_key, "u32", False, total, row_passes, perm1, None, perm2)
    slots = [out, perm2] if argsort else [out, keys, perm2]
    plan.launch(_finish_kernel(st, argsort), groups_for(total, WG), slots,
                [("i32", total), ("i32", n)])


def sort(plan, backend, call) -> None:
    _sort(plan, backend, call, argsort=False)


def argsort(plan, backend, call) -> None:
    _sort(plan, backend, call, argsort=True)
