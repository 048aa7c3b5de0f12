"""The memory plan (bufferize): slot sizes that suit every dtype, in-place reuse rules.

Regression tests for the classes the fuzzer (tests/fuzz) found, issue 10.
"""

from __future__ import annotations

import accy
import numpy as np
import pytest
from accy.ir import Builder
from accy.passes import PassContext, run_stages
from accy.passes.bufferize import SLOT_ALIGN, slot_size
from accy.passes.reference_eval import evaluate


def _memory(module):
    (*_, product) = run_stages(module, PassContext(), until="memory")
    return product.module.functions[0]


def _regions(fn):
    return [op for op in fn.body.ops if op.name == "dispatch.region"]


def _build(param_types, body):
    b = Builder()
    fb = b.begin_function("f", params=[b.tensor(*t) for t in param_types])
    fb.return_(*body(fb))
    fb.finish()
    return b.finish()


def _twice(fb, v):
    """Two readers, so that ``v`` is materialized by a map region of its own."""
    return fb.reduce_sum(v, 0), fb.reduce_max(v)


def test_slot_size_rounds_to_whole_elements_of_every_dtype() -> None:
    assert SLOT_ALIGN == 8
    assert [slot_size(n) for n in (0, 1, 4, 8, 244, 1025)] == [0, 8, 8, 8, 248, 1032]


def test_issue_repro_cast_f64_to_f32_then_slice_a_second_f64_value() -> None:
    """f64[61] → f32 (244 bytes) dies, an f64[30] (240 bytes) takes its slot: the CPU
    launch check refused the 244-byte buffer as 'not a whole number of f64 elements'."""
    def body(fb):
        c = fb.cast(fb.exp(fb.param(0)), "f32")
        s1 = fb.add(fb.slice(c, (0,), (20,)), fb.slice(c, (1,), (21,)))
        y = fb.exp(fb.slice(fb.param(0), (0,), (30,)))
        return s1, fb.add(fb.slice(y, (0,), (10,)), fb.slice(y, (1,), (11,)))

    module = _build([("f64", (61,))], body)
    fn = _memory(module)
    temps = [op.attrs["out_slots"][0] for op in _regions(fn)
             if op.attrs["out_slots"][0] not in fn.attrs["result_slots"]]
    assert len(temps) == 2 and temps[0] == temps[1], "the f64 temporary reuses the f32 slot"
    assert all(fn.attrs["slot_bytes"][s] % SLOT_ALIGN == 0 for s in temps)
    x = np.linspace(-1, 1, 61)
    got = accy.compile(module, "cpu")(x)
    for g, w in zip(got, evaluate(module, "f", [x]), strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-6)


def test_in_place_needs_the_same_element_type() -> None:
    """A cast region over a dying temporary of the same byte size used to be planned in
    place, and the kernel then loaded its output buffer with the input's type (VerifyError
    'load of out0 (f32) typed as i32')."""
    def body(fb):
        t = fb.reduce_sum(fb.reshape(fb.param(0), (3, 4)), 1, keepdims=True)  # temp i32[3,1]
        # map region over the dying temp, f32 out (a division: too costly for fusion to
        # recompute in each reader, so the cast keeps a region of its own)
        r = fb.cast(fb.div(fb.mul(t, t), 3), "f32")
        return _twice(fb, r)

    module = _build([("i32", (12,))], body)
    fn = _memory(module)
    casts = [op for op in _regions(fn) if op.results[0].type.dtype.value == "f32"
             and op.attrs["kind"] == "map"]
    assert casts and all(op.attrs["in_place"] == () for op in casts)
    x = (np.arange(12, dtype=np.int32) % 3) - 1
    got = accy.compile(module, "cpu")(x)
    for g, w in zip(got, evaluate(module, "f", [x]), strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-6)


@pytest.mark.parametrize("view", ["transpose", "broadcast", "slice", "pad"])
def test_in_place_not_taken_through_index_maps(view: str) -> None:
    """The output of a region that yields a transpose/broadcast/slice/pad of an elementwise
    function of its dying input reads other elements than it writes: never in place."""
    def body(fb):
        t = fb.matmul(fb.param(0), fb.param(1))  # temp f32[4,4]
        e = fb.exp(t)
        if view == "transpose":
            v = fb.transpose(e, (1, 0))
        elif view == "broadcast":
            v = fb.broadcast_to(fb.slice(e, (0, 0), (1, 4)), (4, 4))
        elif view == "slice":
            v = fb.pad(fb.slice(e, (1, 0), (4, 4)), (0, 0), (1, 0))
        else:
            v = fb.pad(fb.slice(e, (0, 1), (4, 4)), (0, 1), (0, 0), value=2.0)
        return _twice(fb, fb.mul(v, fb.iota(v.type, 0)))

    rng = np.random.default_rng(3)
    module = _build([("f32", (4, 3)), ("f32", (3, 4))], body)
    fn = _memory(module)
    maps = [op for op in _regions(fn) if op.attrs["kind"] == "map"]
    assert maps and all(op.attrs["in_place"] == () for op in maps)
    xs = [rng.standard_normal((4, 3)).astype(np.float32),
          rng.standard_normal((3, 4)).astype(np.float32)]
    got = accy.compile(module, "cpu")(*xs)
    for g, w in zip(got, evaluate(module, "f", xs), strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-5)


def test_in_place_kept_for_an_elementwise_path_to_the_yield() -> None:
    """The rule still writes in place where it is safe (a chain of elementwise ops)."""
    def body(fb):
        t = fb.matmul(fb.param(0), fb.param(1))
        return _twice(fb, fb.tanh(fb.add(fb.exp(t), t)))

    module = _build([("f32", (4, 3)), ("f32", (3, 4))], body)
    maps = [op for op in _regions(_memory(module)) if op.attrs["kind"] == "map"]
    assert [op.attrs["in_place"] for op in maps] == [(0,)]


def test_argsort_of_softmax_along_axis_0(backend_name: str = "cpu") -> None:
    """Issue repro: argsort(softmax(x), axis=0) returned argsort(x, axis=0) — the
    transposed softmax was written in place over the exp values it still had to read."""
    import accy.numpy as anp

    x = np.random.default_rng(0).standard_normal((4, 3)).astype(np.float32)
    got = accy.jit(lambda x: anp.argsort(anp.softmax(x, axis=0), axis=0))(x)
    e = np.exp(x - x.max(0))
    want = np.argsort(e / e.sum(0), axis=0, kind="stable")
    np.testing.assert_array_equal(np.asarray(got), want)


def test_a_slot_the_launch_check_would_refuse_fails_at_compile(monkeypatch) -> None:
    """Should the planner ever hand out a slot that is not a whole number of a kernel
    buffer's elements again, compile says so (InternalError), not the first call."""
    import accy.passes.bufferize as bufferize
    from accy.errors import InternalError

    monkeypatch.setattr(bufferize, "slot_size", lambda n: n)  # the old, unrounded sizes

    def body(fb):
        c = fb.cast(fb.exp(fb.param(0)), "f32")
        s1 = fb.add(fb.slice(c, (0,), (20,)), fb.slice(c, (1,), (21,)))
        y = fb.exp(fb.slice(fb.param(0), (0,), (30,)))
        return s1, fb.add(fb.slice(y, (0,), (10,)), fb.slice(y, (1,), (11,)))

    with pytest.raises(InternalError, match="not a whole number of elements"):
        accy.compile(_build([("f64", (61,))], body), "cpu", use_cache=False)
