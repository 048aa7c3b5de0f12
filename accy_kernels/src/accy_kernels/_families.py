"""The descriptors of every accy-kernels family (what the plugin hook returns).

Importing this module imports only :mod:`accy.families` (no LLVM, no backend); variant code is
named by ``"module:function"`` strings and imported on first use.
"""

from __future__ import annotations

import dataclasses

from accy.families import Candidate, Family, Role, Signature, Variant

__all__ = ["FAMILIES"]

P = "accy_kernels"
FLOATS = ("f32", "f64")
VALUES = ("f32", "f64", "i32", "i64", "u32")
ADDABLE = ("f32", "f64", "i32", "i64")
INDEX = ("i32", "i64")
WG = tuple(Candidate(w) for w in (256, 128, 64, 512))
#: privatized histograms: reduce work-group size; tile count from the backend's threads
#: (no option) or fixed
PRIV = (Candidate(256), Candidate(256, 1, (("tiles", 4),)), Candidate(256, 1, (("tiles", 8),)))


MATMUL = ("f32", "f64", "i32")


def _mm_candidates(variant):
    from accy_kernels import matmul_blocked, matmul_gemv, matmul_tiled

    mod = {"blocked": matmul_blocked, "tiled": matmul_tiled, "gemv": matmul_gemv}[variant]
    return mod.candidates()


def _in(name, dtypes, shape, doc=""):
    return Role(name, "input", dtypes, shape, doc)


def _out(name, dtypes, shape, doc=""):
    return Role(name, "output", dtypes, shape, doc)


def _opt(name, doc):
    return Role(name, "option", (), "", doc)


def _fam(name, roles, variants, doc):
    return Family(name, Signature(tuple(roles)), f"{P}.references:{name}", tuple(variants),
                  doc, provider="accy-kernels")


_SORT_VARIANT = Variant(
    "radix", f"{P}.sort_msd:run",
    "LSD radix sort, 8-bit digits: per-tile histograms, reduce-then-scan, stable scatter "
    "(Merrill & Grimshaw 2011); on host backends 11-bit digits, and 32-bit keys (unless "
    "crowded) one MSD split into buckets sorted in cache",
    # 32768, not 65536: with the 2 x 256 counter loops a 65536-element tile exceeded
    # lavapipe's 65535 loop iterations per work-item and that candidate always sorted wrongly
    tuple(Candidate(64, ipt) for ipt in (0, 16384, 32768, 4096)),
    dtypes=VALUES,
)

FAMILIES = [
    _fam("gather", [_in("src", VALUES, "(*pre, n, *post)"), _in("indices", INDEX, "(*idx,)"),
                    _opt("axis", "axis of src"), _opt("mode", "raise | clip | wrap"),
                    _out("out", VALUES, "(*pre, *idx, *post)")],
         [Variant("direct", f"{P}.gather_direct:run", "one work-item per output element",
                  WG, dtypes=VALUES)],
         "numpy.take(src, indices, axis, mode)"),
    _fam("scatter", [_in("dst", VALUES, "(*pre, n, *post)"), _in("indices", INDEX, "(*idx,)"),
                     _in("values", VALUES, "broadcastable to (*pre, *idx, *post)"),
                     _opt("axis", "axis of dst"), _opt("mode", "raise | clip | wrap"),
                     _out("out", VALUES, "dst.shape")],
         [Variant("last_write", f"{P}.scatter_last_write:run",
                  "atomic-max winner per target, then one write: last index position wins",
                  WG, dtypes=VALUES)],
         "copy of dst with values written at indices; duplicates: last position wins"),
    _fam("scatter_add", [_in("dst", ADDABLE, "(*pre, n, *post)"),
                         _in("indices", INDEX, "(*idx,)"),
                         _in("values", ADDABLE, "broadcastable to (*pre, *idx, *post)"),
                         _opt("axis", "axis of dst"), _out("out", ADDABLE, "dst.shape")],
         [Variant("atomic", f"{P}.scatter_add_atomic:run", "one atomic add per value element",
                  WG, dtypes=ADDABLE),
          Variant("sorted", f"{P}.scatter_add_sorted:run",
                  "stable radix sort of the indices, then one work-item per output summing its "
                  "run (binary search) in position order: no atomics, deterministic",
                  WG, dtypes=ADDABLE),
          Variant("privatized", f"{P}.scatter_add_privatized:run",
                  "one private histogram per tile (a CPU thread) without atomics, then a "
                  "sum of the tiles per output; default on host-memory backends when tiles x "
                  "output <= values", PRIV, dtypes=ADDABLE)],
         "numpy.add.at on a copy of dst"),
    _fam("segment_sum", [_in("values", ADDABLE, "(n, *inner)"),
                         _in("segment_ids", INDEX, "(n,)"),
                         _opt("num_segments", "number of segments (elements)"),
                         _out("out", ADDABLE, "(num_segments, *inner)")],
         [Variant("atomic", f"{P}.segment_sum_atomic:run", "atomic adds into zeros", WG,
                  dtypes=ADDABLE),
          Variant("sorted", f"{P}.segment_sum_sorted:run",
                  "stable radix sort of the ids, then one work-item per output summing its run "
                  "in position order: no atomics, deterministic", WG, dtypes=ADDABLE),
          Variant("privatized", f"{P}.segment_sum_privatized:run",
                  "one private histogram per tile without atomics, then a sum of the tiles "
                  "(as scatter_add.privatized)", PRIV, dtypes=ADDABLE)],
         "unsorted segment sum"),
    _fam("scan", [_in("x", ADDABLE, "(n,)"), _opt("inclusive", "inclusive (cumsum) or exclusive"),
                  _out("out", ADDABLE, "(n,)")],
         [Variant("reduce_then_scan", f"{P}.scan_reduce_then_scan:run",
                  "tile reduce, spine scan in shared memory, tile rescan (Merrill & Grimshaw)",
                  tuple(Candidate(64, ipt) for ipt in (0, 4096, 32768)), dtypes=ADDABLE)],
         "prefix sum"),
    _fam("filter", [_in("x", VALUES, "(n,)"), _in("mask", ("bool",), "(n,)"),
                    _out("out", VALUES, "(count,)")],
         [Variant("compact", f"{P}.filter_compact:run",
                  "exclusive scan of the mask, then a scatter to the kept positions", WG,
                  dtypes=VALUES)],
         "stream compaction x[mask], order kept"),
    _fam("sort", [_in("x", VALUES, "(n,)"), _opt("descending", "bool"),
                  _out("out", VALUES, "(n,)")], [_SORT_VARIANT],
         "numpy.sort order (NaN last, -0.0/+0.0 equal and stable)"),
    _fam("argsort", [_in("x", VALUES, "(n,)"), _opt("descending", "bool"),
                     _out("order", ("i64",), "(n,)")], [_SORT_VARIANT],
         "numpy.argsort(kind='stable')"),
    _fam("sort_pairs", [_in("keys", VALUES, "(n,)"), _in("values", VALUES, "(n,)"),
                        _opt("descending", "bool"), _out("keys_out", VALUES, "(n,)"),
                        _out("values_out", VALUES, "(n,)")], [_SORT_VARIANT],
         "keys sorted stably, values carried along"),
    _fam("spmv", [_in("A", FLOATS, "(n_rows, n_cols) scipy.sparse"),
                  _in("x", FLOATS, "(n_cols,)"), _opt("format", "csr | coo | ell | sell"),
                  _out("y", FLOATS, "(n_rows,)")],
         [Variant("csr_scalar", f"{P}.spmv_csr_scalar:run", "one work-item per row", WG,
                  dtypes=FLOATS),
          Variant("csr_vector", f"{P}.spmv_csr_vector:run",
                  "one work-group per row, shared-memory tree reduction (Bell & Garland 2008)",
                  tuple(Candidate(w) for w in (32, 64, 16, 128)), dtypes=FLOATS),
          Variant("coo", f"{P}.spmv_coo:run",
                  "segmented sum over nnz tiles, atomic add at row boundaries",
                  tuple(Candidate(64, ipt) for ipt in (256, 1024, 64)), dtypes=FLOATS,
                  requires=("float_atomics",)),
          Variant("coo_rows", f"{P}.spmv_coo:run_rows",
                  "row-sorted COO, one work-item per row summing its run (binary search on the "
                  "rows): no atomics, deterministic", WG, dtypes=FLOATS),
          Variant("ell", f"{P}.spmv_ell:run",
                  "column-major ELLPACK, rows longer than the width spill into a COO tail",
                  WG, dtypes=FLOATS),
          Variant("sell", f"{P}.spmv_sell:run",
                  "SELL-C-sigma (Kreutzer et al. 2014): sorted windows, padded slices",
                  tuple(Candidate(c, 1, (("C", c), ("sigma", s)))
                        for c, s in ((32, 256), (8, 64), (64, 1024), (32, 1))), dtypes=FLOATS)],
         "sparse matrix times dense vector, A @ x"),
    _fam("spmm", [_in("A", FLOATS, "(n_rows, n_cols) scipy.sparse"),
                  _in("X", FLOATS, "(n_cols, k)"), _out("Y", FLOATS, "(n_rows, k)")],
         [Variant("csr", f"{P}.spmm_csr:run", "one work-item per output element (row, column)",
                  WG, dtypes=FLOATS)],
         "CSR sparse matrix times dense matrix"),
    _fam("matmul", [_in("a", MATMUL, "(batch?, m, k) or (k,), any strides"),
                    _in("b", MATMUL, "(batch?, k, n) or (k,), any strides"),
                    _out("out", MATMUL, "numpy.matmul(a, b).shape")],
         [Variant("blocked", f"{P}.matmul_api:run_blocked",
                  "packed A/B panels, MR x NR vector-FMA microkernel per work-group, tiles "
                  "split over the thread pool (Goto & van de Geijn 2008; BLIS)",
                  _mm_candidates("blocked"), default=f"{P}.matmul_api:default",
                  requires=("host_memory",), dtypes=MATMUL),
          Variant("tiled", f"{P}.matmul_api:run_tiled",
                  "work-group tiles staged through shared memory with barriers, a register "
                  "tile per work-item (Volkov & Demmel 2008)", _mm_candidates("tiled"),
                  default=f"{P}.matmul_api:default", dtypes=MATMUL),
          Variant("gemv", f"{P}.matmul_api:run_gemv",
                  "matrix-vector: a work-group per row block (lanes along k, ordered "
                  "partial sums) or a work-item per row", _mm_candidates("gemv"),
                  default=f"{P}.matmul_api:default", dtypes=MATMUL)],
         "numpy.matmul (batched, strided operands, fused epilogues from the compiler)"),
    _fam("random", [_opt("shape", "output shape"), _opt("seed", "64-bit stream key"),
                    _opt("offset", "counter offset (blocks)"),
                    _out("out", ("f32", "f64", "i32", "i64", "u32"), "shape")],
         # candidates: work-group sizes (the values never depend on the launch geometry)
         [Variant(name, f"{P}.random.generators:run_distribution", doc, WG)
          for name, doc in (
              ("philox4x32", "Philox4x32-10/-7 (Salmon et al., SC'11)"),
              ("threefry2x32", "Threefry2x32-20/-13 (Salmon et al., SC'11)"),
              ("threefry4x32", "Threefry4x32-20/-13 (Salmon et al., SC'11)"),
              ("squares", "Squares (Widynski 2020)"))],
         "counter-based random streams keyed by (seed, offset)"),
]

# IR lowering (``library.*`` ops, :mod:`accy.families.lowering`): the plan function of each
# family, in family metadata ``ir_plan``.
_IR_PLANS = {"gather": "gather", "scatter": "scatter", "scatter_add": "scatter_add",
             "segment_sum": "segment_sum", "sort": "sort", "argsort": "argsort",
             "random": "random"}
FAMILIES = [
    dataclasses.replace(f, metadata={**f.metadata, "ir_plan": f"{P}.ir_plans:{_IR_PLANS[f.name]}"})
    if f.name in _IR_PLANS else f
    for f in FAMILIES
]

# Compiler contractions (``dispatch.region {kind = "contract"}``, :mod:`accy.passes.contraction`).
FAMILIES = [
    dataclasses.replace(f, metadata={**f.metadata,
                                     "contract_plan": f"{P}.matmul_ir:contract_plan"})
    if f.name == "matmul" else f
    for f in FAMILIES
]

# Family sweeps (``accy tune --families``, :mod:`accy.tuning.family_sweep`): the problems
# each family is timed on (every dtype, default and workload sizes, with references).
FAMILIES = [
    dataclasses.replace(f, metadata={**f.metadata,
                                     "tuning_problems": f"{P}.tuning_problems:problems"})
    for f in FAMILIES
]
