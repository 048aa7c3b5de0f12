"""8- and 16-bit integers (and uint64) end to end, against numpy, on every backend.

One jitted program per dtype computes every op class at once (wrapping arithmetic, compares,
select, min/max, floor division and remainder, bitwise ops and shifts, casts both ways,
indexing, reductions that accumulate in numpy's dtypes, promotion with other dtypes), so
each backend compiles one program per dtype. Edge values: the type's minimum and maximum,
``MIN // -1``, ``255 + 1``. A backend that lacks a dtype refuses it with a
``CapabilityError`` naming the device feature (Vulkan: ``int8``/``int16``).
"""

from __future__ import annotations

import accy
import accy.numpy as anp
import numpy as np
import pytest
from accy.errors import CapabilityError

DTYPES = [np.int8, np.uint8, np.int16, np.uint16, np.uint64]


def _operands(dt: type) -> tuple[np.ndarray, np.ndarray]:
    info = np.iinfo(dt)
    lo, hi = int(info.min), int(info.max)
    a = np.array([lo, hi, 0, 1, 7, hi - 1, lo, 100, hi, 3, 5, hi // 2], dt)
    b = np.array([1, 1, 3, hi, 2, 5, -1 if lo else 1, 9, 2, 0, lo, 4], dt)
    return a, b


def _program(x, y):
    """Every op class once; works on numpy arrays and under ``accy.jit`` alike."""
    small = x.dtype.itemsize < 8
    out = {
        "add": x + y, "sub": x - y, "mul": x * y, "add1": x + 1,
        "lt": x < y, "eq": x == y, "ge": x >= 3,
        "where": anp.where(x > y, x, y), "max": anp.maximum(x, y), "min": anp.minimum(x, y),
        "floordiv": x // y, "mod": x % y, "and": x & y, "or": x | 5, "xor": x ^ y,
        "shr": x >> 1, "shl": x << 2,
        "to_f32": x.astype(anp.float32) * 0.5, "astype": x.astype(anp.int8),
        "from_f32": (x.astype(anp.float32) * 0.25).astype(x.dtype),
        "to_i64": x.astype(anp.int64) - 1,
        "slice": x[::2] + y[1:7],
        "gather": x[np.array([3, 0, 0, 11])], "sort": anp.sort(x) if small else x,
        "sum": anp.sum(x.reshape(3, 4), axis=1), "cumsum": anp.cumsum(x), "xmax": x.max(),
    }
    if small:  # promotion with a wider dtype (uint64 with int32 would be float64)
        out["with_i32"] = x + np.arange(12, dtype=np.int32)
        idx = np.array([1, 4, 1, 11])
        if isinstance(x, np.ndarray):  # numpy.add.at: repeated indices accumulate (and wrap)
            acc = x.copy()
            np.add.at(acc, idx, x[:4])
            out["add_at"] = acc
        else:
            out["add_at"] = x.at[idx].add(x[:4])
    if x.dtype.kind == "i":
        out["neg"] = -x
        out["abs"] = anp.abs(x)
    return out


@pytest.mark.parametrize("dt", DTYPES, ids=lambda d: np.dtype(d).name)
def test_small_ints_equal_numpy(backend, dt):
    if dt is np.uint64 and backend != "cpu":
        pytest.skip("uint64 is checked on cpu (the int64 code paths with unsigned ops)")
    a, b = _operands(dt)
    with np.errstate(all="ignore"):
        want = _program(a, b)
    try:
        got = accy.jit(_program, backend=backend)(a, b)
    except CapabilityError as e:  # a device without the dtype: refused by its feature
        assert np.dtype(dt).name[:-1] in str(e) or "int" in str(e.feature)
        pytest.skip(f"{backend} lacks {np.dtype(dt).name}: {e}")
    for name, w in want.items():
        g = np.asarray(got[name])
        assert g.dtype == np.asarray(w).dtype, (name, g.dtype, np.asarray(w).dtype)
        np.testing.assert_array_equal(g, w, err_msg=name)


def test_promotion_and_accumulation_follow_numpy():
    """numpy's integer promotion table and its sum dtypes (int8 → int64, uint8 → uint64)."""
    from accy.frontend.numpy_api import sum_dtype
    from accy.frontend.trace import result_dtype
    from accy.ir import DType

    ints = [DType.I8, DType.U8, DType.I16, DType.U16, DType.I32, DType.U32, DType.I64]
    for p in ints:
        for q in ints:
            assert result_dtype(p, q).numpy == np.promote_types(p.numpy, q.numpy), (p, q)
    for d in (DType.I8, DType.I16, DType.U8, DType.U16):
        assert sum_dtype(d).numpy == np.sum(np.zeros(1, d.numpy)).dtype
    wrapped = accy.jit(lambda x: x + 1)(np.array([255, 127], np.uint8))
    np.testing.assert_array_equal(wrapped, np.array([0, 128], np.uint8))
    with pytest.raises(accy.errors.VerifyError, match="does not fit u8"):
        accy.jit(lambda x: x + 256)(np.array([1], np.uint8))


def test_vulkan_refuses_narrow_ints_by_capability():
    """A Vulkan device without shaderInt8/storageBuffer8BitAccess: a compile-time
    CapabilityError naming the ``int8`` feature (no device needed: the target alone)."""
    from accy.kernel import KernelBuilder

    pytest.importorskip("accy_backend_vulkan")
    from accy_backend_vulkan.target import ALL_FEATURES, VulkanTarget

    kb = KernelBuilder("narrow", workgroup_size=64)
    x, y = kb.buffer("x", "u8", "read"), kb.buffer("y", "u8", "write")
    i = kb.global_id()
    kb.store(y, i, x[i] + kb.const(1, "u8"))
    kernel = kb.build()
    VulkanTarget(ALL_FEATURES).legalize(kernel)
    with pytest.raises(CapabilityError, match="int8") as info:
        VulkanTarget(ALL_FEATURES - {"int8"}).legalize(kernel)
    assert info.value.feature == "int8"
    assert "u8" not in VulkanTarget(ALL_FEATURES - {"int8"}).dtypes()
