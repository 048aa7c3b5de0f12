"""Integer attributes of the kernel-library ops are integers exactly: ``int()`` used to
truncate ``axis=1.5``, ``seed=1.5``, ``shape=(1.5,)`` and ``num_segments=2.5`` silently."""

from __future__ import annotations

import accy
import numpy as np
import pytest
from accy.errors import VerifyError


def _build(params, body):
    b = accy.Builder()
    fb = b.begin_function("f", params=[b.tensor(d, s) for d, s in params])
    fb.return_(*body(fb, [fb.param(i) for i in range(len(params))]))
    fb.finish()
    return b.finish()


@pytest.mark.parametrize("body", [
    lambda fb, p: [fb.gather(p[0], p[1], axis=0.0)],
    lambda fb, p: [fb.scatter(p[0], p[1], 1.0, axis=0.5)],
    lambda fb, p: [fb.scatter_add(p[0], p[1], 1.0, axis=None)],
    lambda fb, p: [fb.sort(p[0], axis=-1.0)],
    lambda fb, p: [fb.argsort(p[0], axis="0")],
    lambda fb, p: [fb.random_uniform((3,), seed=1.5)],
    lambda fb, p: [fb.random_uniform((1.5,), seed=1)],
    lambda fb, p: [fb.random_uniform((3,), seed=1, offset=2.0)],
    lambda fb, p: [fb.random_uniform("3", seed=1)],
    lambda fb, p: [fb.segment_sum(p[0], p[1], 2.5)],
])
def test_non_integer_attribute_is_verify_error(body):
    with pytest.raises(VerifyError, match="must be"):
        _build([("f32", (4,)), ("i32", (4,))], body)


def test_numpy_integer_attributes_accepted():
    m = _build([("f32", (4,)), ("i32", (4,))], lambda fb, p: [
        fb.gather(p[0], p[1], axis=np.int64(0)),
        fb.random_uniform(np.int32(3), seed=np.uint64(2**64 - 1)),
        fb.segment_sum(p[0], p[1], np.int64(4))])
    out = accy.compile(m, backend="cpu")(np.arange(4, dtype=np.float32),
                                          np.array([3, 2, 1, 0], np.int32))
    assert np.array_equal(out[0], [3, 2, 1, 0]) and out[1].shape == (3,)
    assert np.array_equal(out[2], [3, 2, 1, 0])
