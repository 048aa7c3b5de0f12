"""The memory plan on every backend: slot reuse across every dtype pair, empty tensors.

Regression tests for the planner/stage classes the fuzzer (tests/fuzz) found (issue 10).
"""

from __future__ import annotations

import itertools

import accy
import numpy as np
import pytest
from accy.errors import CapabilityError
from accy.ir import Builder
from accy.passes import PassContext, run_stages
from accy.passes.reference_eval import evaluate

DTYPES = ("bool", "i32", "i64", "f32", "f64")
BYTES = {"bool": 1, "i32": 4, "i64": 8, "f32": 4, "f64": 8}


def _compile(module, backend):
    try:
        return accy.compile(module, backend)
    except CapabilityError as e:
        pytest.skip(f"{backend} cannot run it: {e}")


def _reuse_program(first: str, second: str):
    """Temporary A (``first``, 61 elements: an odd byte count) dies, then temporary B
    (``second``, as many elements as fit A's bytes) is planned into A's slot."""
    n2 = xs_rows(first, second)
    b = Builder()
    fb = b.begin_function("f", params=[b.tensor("i32", (61, 2)), b.tensor("i32", (n2, 2))])

    def temp_and_readers(x, dtype):
        if dtype == "bool":  # a map region of its own: read by two map regions below
            rows = fb.reduce_sum(x, 1)  # (a division: too costly to recompute in each)
            t = fb.gt(fb.div(rows, 3), 0)
            return fb.select(t, rows, 7), fb.select(t, 5, fb.neg(rows))
        t = fb.reduce_sum(fb.cast(x, dtype), 1)  # a reduction result is always a temporary
        return fb.reduce_sum(t), fb.reduce_max(fb.mul(t, t))

    outs = temp_and_readers(fb.param(0), first) + temp_and_readers(fb.param(1), second)
    fb.return_(*outs)
    fb.finish()
    return b.finish()


def xs_rows(first: str, second: str) -> int:
    return max(1, 61 * BYTES[first] // BYTES[second])


@pytest.mark.parametrize(("first", "second"), list(itertools.product(DTYPES, DTYPES)))
def test_slot_reuse_across_every_dtype_pair(backend: str, first: str, second: str) -> None:
    module = _reuse_program(first, second)
    (*_, mem) = run_stages(module, PassContext(), until="memory")
    fn = mem.module.functions[0]
    writers: dict[int, list[str]] = {}
    for op in fn.body.ops:
        slot = op.attrs.get("out_slots", (None,))[0]
        if op.name == "dispatch.region" and slot not in fn.attrs["result_slots"]:
            writers.setdefault(slot, []).append(op.results[0].type.dtype.value)
    shared = [s for s, dts in writers.items() if first in dts
              and second in dts[dts.index(first) + (first == second):]]
    assert shared, f"no slot holds a {first} and then a {second} temporary: {writers}"
    slot = shared[0]
    assert fn.attrs["slot_bytes"][slot] % 8 == 0
    rng = np.random.default_rng(1)
    xs = [rng.integers(-3, 4, t.shape).astype(np.int32) for t in fn.param_types]
    got = _compile(module, backend)(*xs)
    for g, w in zip(got, evaluate(module, "f", xs), strict=True):
        np.testing.assert_array_equal(g, w)


def _empty_cases():
    """(name, param types, body): programs over empty tensors; numpy's answer is the oracle."""
    e = ("f32", (0,))
    m = ("f32", (2, 0, 3))
    yield "elementwise", [e, e], lambda fb: [fb.add(fb.exp(fb.param(0)), fb.param(1))]
    yield "compare-select", [e, e], lambda fb: [
        fb.select(fb.lt(fb.param(0), fb.param(1)), fb.param(0), 1.5)]
    yield "cast", [e], lambda fb: [fb.cast(fb.param(0), "f64"), fb.cast(fb.param(0), "bool")]
    yield "cast-float-to-int", [e], lambda fb: [fb.cast(fb.param(0), "i32")]
    yield "sum-mean-empty-axis", [m], lambda fb: [
        fb.reduce_sum(fb.param(0), 1), fb.reduce_mean(fb.param(0), 1)]
    yield "max-other-axis", [m], lambda fb: [fb.reduce_max(fb.param(0), 2)]
    yield "full-sum", [m], lambda fb: [fb.reduce_sum(fb.param(0))]
    yield "matmul-k0", [("f32", (3, 0)), ("f32", (0, 2))], lambda fb: [
        fb.matmul(fb.param(0), fb.param(1))]
    yield "matmul-m0", [("f32", (0, 4)), ("f32", (4, 2))], lambda fb: [
        fb.matmul(fb.param(0), fb.param(1))]
    yield "views", [m], lambda fb: [
        fb.reshape(fb.param(0), (0, 6)), fb.transpose(fb.param(0), (2, 0, 1)),
        fb.slice(fb.param(0), (0, 0, 1), (2, 0, 3))]
    yield "slice-to-empty", [("f32", (4, 3))], lambda fb: [
        fb.exp(fb.slice(fb.param(0), (2, 0), (2, 3)))]
    yield "pad-of-empty", [e], lambda fb: [fb.pad(fb.param(0), (2,), (1,), value=3.0)]
    yield "softmax-empty-axis", [e], lambda fb: [fb.softmax(fb.param(0))]
    yield "softmax-axis-of-empty", [m], lambda fb: [
        fb.softmax(fb.param(0), 1), fb.softmax(fb.param(0), 2)]
    yield "sort-argsort", [m], lambda fb: [fb.sort(fb.param(0)), fb.argsort(fb.param(0), 1)]
    yield "empty-constant-in-a-map", [m], lambda fb: [
        fb.add(fb.param(0), fb.constant(Builder.tensor("f32", (2, 0, 3)), np.zeros((2, 0, 3))))]
    yield "empty-constant-reshaped", [("f64", (0, 3))], lambda fb: [
        fb.mul(fb.reshape(fb.param(0), (3, 0)),
               fb.constant(Builder.tensor("f64", (3, 0)), np.zeros((3, 0))))]


_NUMPY = {
    "sum-mean-empty-axis": lambda x: [np.zeros((2, 3), np.float32),
                                      np.full((2, 3), np.nan, np.float32)],
    "full-sum": lambda x: [np.float32(0)],
    "matmul-k0": lambda a, b: [np.zeros((3, 2), np.float32)],
    "pad-of-empty": lambda x: [np.full(3, 3.0, np.float32)],
}


@pytest.mark.parametrize(("name", "params", "body"),
                         [pytest.param(*c, id=c[0]) for c in _empty_cases()])
def test_every_op_on_empty_inputs(backend: str, name: str, params, body) -> None:
    b = Builder()
    fb = b.begin_function("f", params=[b.tensor(*t) for t in params])
    fb.return_(*body(fb))
    fb.finish()
    module = b.finish()
    xs = [np.zeros(shape, dtype=np.float32 if dt == "f32" else np.float64)
          for dt, shape in params]
    want = evaluate(module, "f", xs)
    if name in _NUMPY:  # the reference itself agrees with numpy's answer
        for w, n in zip(want, _NUMPY[name](*xs), strict=True):
            np.testing.assert_array_equal(w, n)
    got = _compile(module, backend)(*xs)
    for g, w in zip(got, want, strict=True):
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_array_equal(g, w)


@pytest.mark.parametrize("form", ["getitem", "take", "take-clip", "take-wrap", "at-add"])
def test_uint32_index_arrays_are_accepted(backend: str, form: str) -> None:
    """Traced uint32 indices passed the frontend and then failed in the IR verifier; they
    are widened to int64 at the boundary and give numpy's answer."""
    import accy.numpy as anp

    x = np.arange(5, dtype=np.float32) * 2
    idx = np.array([4, 0, 2, 2], dtype=np.uint32)
    fns = {
        "getitem": (lambda x, i: x[i], lambda: x[idx]),
        "take": (lambda x, i: anp.take(x, i, axis=0), lambda: np.take(x, idx)),
        "take-clip": (lambda x, i: anp.take(x, i + np.uint32(3), axis=0, mode="clip"),
                      lambda: np.take(x, idx + 3, mode="clip")),
        "take-wrap": (lambda x, i: anp.take(x, i + np.uint32(3), axis=0, mode="wrap"),
                      lambda: np.take(x, idx + 3, mode="wrap")),
        "at-add": (lambda x, i: x.at[i].add(1.0),
                   lambda: (lambda y: (np.add.at(y, idx, 1.0), y)[1])(x.copy())),
    }
    fn, want = fns[form]
    try:
        got = accy.jit(fn, backend=backend)(x, idx)
    except CapabilityError as e:
        pytest.skip(f"{backend} cannot run it: {e}")
    np.testing.assert_array_equal(np.asarray(got), want())
