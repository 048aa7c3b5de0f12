"""Device limits nobody used to check, tested at their boundaries on every backend.

- Storage-buffer bindings per kernel (``Capabilities.max_storage_buffers``; 32 on
  lavapipe, none on CPU): a kernel binds its output plus one buffer per input, so a fused
  sum of 32 arrays needed 33 bindings (one array silently dropped on lavapipe) and 33
  crashed ``vkQueueSubmit``. Fusion now splits regions to fit.
- Scalars beyond the push-constant limit (128 bytes on lavapipe): a kernel with 40 ``i32``
  scalars (168 bytes) reads them from a storage buffer instead.
"""

from __future__ import annotations

import functools

import accy
import accy.numpy as anp
import numpy as np
import pytest
from accy.backend import Geometry
from accy.kernel import KernelBuilder, interpret

from tests._backends import open_live_backend as open_backend

RNG = np.random.default_rng(3)


def _sum_program(n: int, size: int = 100):
    b = accy.Builder()
    t = b.tensor("f32", (size,))
    fb = b.begin_function(f"sum{n}", params=[t] * n)
    acc = fb.param(0)
    for i in range(1, n):
        acc = fb.add(acc, fb.param(i))
    fb.return_(acc)
    fb.finish()
    return b.finish()


def _kernel_buffers(exe) -> list[int]:
    kernels = exe.stages[-1].module.attrs["kernels"]
    return [len(k.buffers) for k in kernels.values()]


@pytest.mark.parametrize("n", [31, 32, 33, 64])
def test_sum_of_n_arrays(backend, n):
    xs = [RNG.standard_normal(100).astype(np.float32) for _ in range(n)]
    exe = accy.compile(_sum_program(n), backend=backend)
    (out,) = exe(*xs)
    want = functools.reduce(lambda a, c: a + c, xs)  # same order of additions
    np.testing.assert_array_equal(out, want)
    limit = open_backend(backend).capabilities().max_storage_buffers
    if limit is not None:
        assert max(_kernel_buffers(exe)) <= limit
        assert (exe.kernel_count == 1) == (n + 1 <= limit)  # split only when needed
    else:
        assert exe.kernel_count == 1


def _stencil_program(fields: int, size: int):
    """A weather-stencil-like step: each of ``fields`` fields is updated from its own
    neighbours and those of the next two fields, one fused map reading ~42 buffers."""
    b = accy.Builder()
    t = b.tensor("f32", (size,))
    fb = b.begin_function("stencil", params=[t] * fields)
    ps = [fb.param(i) for i in range(fields)]

    def shifted(x, k):  # x[i + k] with zero boundary, as pad + slice
        padded = fb.pad(x, [2], [2], 0.0)
        return fb.slice(padded, [2 + k], [2 + k + size])

    acc = None
    for i in range(fields):
        a, c, d = ps[i], ps[(i + 1) % fields], ps[(i + 2) % fields]
        term = fb.add(fb.mul(fb.sub(shifted(a, 1), shifted(a, -1)), c), fb.mul(d, a))
        acc = term if acc is None else fb.add(acc, term)
    fb.return_(acc)
    fb.finish()
    return b.finish()


def _stencil_reference(xs: list[np.ndarray]) -> np.ndarray:
    def shifted(x, k):
        p = np.pad(x, 2)
        return p[2 + k: 2 + k + len(x)]

    acc = None
    n = len(xs)
    for i in range(n):
        a, c, d = xs[i], xs[(i + 1) % n], xs[(i + 2) % n]
        term = (shifted(a, 1) - shifted(a, -1)) * c + d * a
        acc = term if acc is None else acc + term
    return acc


def test_fused_program_needing_42_bindings(backend):
    fields, size = 41, 257
    m = _stencil_program(fields, size)
    xs = [RNG.standard_normal(size).astype(np.float32) for _ in range(fields)]
    exe = accy.compile(m, backend=backend)
    (out,) = exe(*xs)
    np.testing.assert_allclose(out, _stencil_reference(xs), rtol=1e-5, atol=1e-5)
    limit = open_backend(backend).capabilities().max_storage_buffers
    if limit is None:
        assert max(_kernel_buffers(exe)) == fields + 1  # one region, 42 bindings
    else:
        assert max(_kernel_buffers(exe)) <= limit


_SCALAR_DTYPES = ("i32", "f32", "i64", "f64", "bool", "u32", "i8", "u16", "u8", "i16", "u64")
_NP = {"i32": np.int32, "f32": np.float32, "i64": np.int64, "f64": np.float64,
       "bool": np.bool_, "u32": np.uint32, "i8": np.int8, "u8": np.uint8, "i16": np.int16,
       "u16": np.uint16, "u64": np.uint64}


def many_scalars_kernel(dtypes: list[str]):
    """``out[i] = x[i] + sum_k f64(s_k) * (k + 1) + num_groups``: every scalar matters."""
    kb = KernelBuilder(f"scalars{len(dtypes)}_{'_'.join(sorted(set(dtypes)))}", 32)
    out, x = kb.buffer("out", "f64", "write"), kb.buffer("x", "f64", "read")
    ss = [kb.scalar(f"s{k}", d) for k, d in enumerate(dtypes)]
    i = kb.global_id()
    with kb.if_(i < 50):
        acc = kb.let("acc", x[i] + kb.num_groups().cast("f64"))
        for k, s in enumerate(ss):
            kb.assign(acc, acc + s.cast("f64") * float(k + 1))
        kb.store(out, i, acc)
    return kb.build()


def scalar_values(dtypes: list[str]) -> list:
    vals = []
    for k, d in enumerate(dtypes):
        v = {"i32": -1000 - k, "f32": 0.25 * k - 3.5, "i64": -(2**40) - 7 * k,
             "f64": 1e10 + k / 3, "bool": k % 2 == 0, "u32": 3_000_000_000 + k,
             "i8": -100 + k, "u8": 200 + k, "i16": -30000 + k, "u16": 60000 + k,
             "u64": 2**63 + 2048 * k}[d]
        vals.append(_NP[d](v).item())
    return vals


def run_kernel(be, kernel, groups, arrays, scalars):
    loaded = be.load(be.compile(kernel))
    bufs = []
    try:
        for a in arrays:
            bufs.append(be.allocate(a.nbytes))
            be.write(bufs[-1], a)
        pairs = [(p.dtype, v) for p, v in zip(kernel.scalars, scalars, strict=True)]
        be.launch(loaded, Geometry(groups, kernel.workgroup_size), bufs, pairs)
        be.synchronize()
        return [be.read(b, np.empty_like(a)) for b, a in zip(bufs, arrays, strict=True)]
    finally:
        for b in bufs:
            be.free(b)
        be.destroy(loaded)


def check_many_scalars(be, dtypes: list[str]):
    kernel = many_scalars_kernel(dtypes)
    x = RNG.standard_normal(64)
    scalars = scalar_values(dtypes)
    want = [np.zeros(64), x.copy()]
    interpret(kernel, 2, want, scalars)
    got = run_kernel(be, kernel, 2, [np.zeros(64), x], scalars)
    np.testing.assert_array_equal(got[0], want[0])


@pytest.mark.parametrize("count", [40, 3])
def test_forty_i32_scalars(backend, count):
    check_many_scalars(open_backend(backend), ["i32"] * count)


def test_many_mixed_scalars(backend):
    """Every scalar dtype, 37 of them: past the push-constant limit on Vulkan (the scalar
    buffer), with the 8/16-bit ones as 32-bit words."""
    n = len(_SCALAR_DTYPES)
    check_many_scalars(open_backend(backend), [_SCALAR_DTYPES[k % n] for k in range(37)])


@pytest.mark.parametrize("limit", [4, 6, 9])
def test_lowered_binding_limit_splits_regions(backend, monkeypatch, limit):
    """Any limit (here lowered through the capabilities) is respected by fusion."""
    import dataclasses

    be = open_backend(backend)
    caps = dataclasses.replace(be.capabilities(), max_storage_buffers=limit,
                               device_fingerprint=f"{be.capabilities().device_fingerprint}"
                                                  f"-bindings{limit}")
    monkeypatch.setattr(be, "capabilities", lambda: caps)
    n = 23
    xs = [RNG.standard_normal(100).astype(np.float32) for _ in range(n)]
    exe = accy.compile(_sum_program(n), backend=backend)
    assert max(_kernel_buffers(exe)) <= limit
    (out,) = exe(*xs)
    np.testing.assert_array_equal(out, functools.reduce(lambda a, c: a + c, xs))
    fields = 13
    ys = [RNG.standard_normal(65).astype(np.float32) for _ in range(fields)]
    exe = accy.compile(_stencil_program(fields, 65), backend=backend)
    assert max(_kernel_buffers(exe)) <= limit
    (out,) = exe(*ys)
    np.testing.assert_allclose(out, _stencil_reference(ys), rtol=1e-5, atol=1e-5)


def test_one_op_over_the_binding_limit_is_refused():
    """An op that alone reads more inputs than the limit cannot be split: a clear error."""
    from accy.backend import TargetProfile
    from accy.errors import OutOfResources
    from accy.passes import PassContext, run_stages

    b = accy.Builder()
    t = b.tensor("f32", (8,))
    fb = b.begin_function("sel", params=[b.tensor("bool", (8,)), t, t])
    fb.return_(fb.select(fb.param(0), fb.param(1), fb.param(2)))
    fb.finish()
    profile = TargetProfile("test", frozenset({"f32", "bool", "i32"}), frozenset(), 256, 1,
                            1 << 16, max_storage_buffers=3)
    with pytest.raises(OutOfResources, match="4 buffers"):
        run_stages(b.finish(), PassContext(target_profile=profile), until="dispatch")


@pytest.fixture
def vulkan():
    from accy.plugins import probe_backend

    ok, reason = probe_backend("vulkan")
    if not ok:
        pytest.skip(f"backend 'vulkan' unavailable: {reason}")
    return open_backend("vulkan")


def test_push_constants_at_the_limit_and_one_over(vulkan, monkeypatch):
    """Lower maxPushConstantsSize to the exact block size of one kernel: it still pushes;
    one more scalar spills to the scalar buffer; both give the interpreter's answer."""
    from accy_backend_vulkan.target import push_layout

    dtypes = ["i32", "f64", "bool", "i64", "f32", "u32", "i32"]  # odd offsets before 8-byte
    limit = push_layout(many_scalars_kernel(dtypes))[1]
    monkeypatch.setattr(vulkan, "target", vulkan.target.with_limits(max_push_constant_bytes=limit))
    at = many_scalars_kernel(dtypes)
    over = many_scalars_kernel([*dtypes, "f64", "i32"])
    assert push_layout(over)[1] > limit
    assert vulkan.compile(at).metadata["scalar_binding"] is None
    assert vulkan.compile(over).metadata["scalar_binding"] == len(over.buffers)
    check_many_scalars(vulkan, dtypes)
    check_many_scalars(vulkan, [*dtypes, "f64", "i32"])


def test_scalar_buffers_per_launch(vulkan):
    """Queued launches with different spilled scalars each see their own values."""
    kernel = many_scalars_kernel(["i32"] * 40)
    loaded = vulkan.load(vulkan.compile(kernel))
    x = RNG.standard_normal(64)
    bufs = [vulkan.allocate(512) for _ in range(3)]
    try:
        vulkan.write(bufs[2], x)
        for k in range(2):
            vulkan.write(bufs[k], np.zeros(64))
            scalars = [("i32", v + 100 * k) for v in range(40)]
            vulkan.launch(loaded, Geometry(2, 32), [bufs[k], bufs[2]], scalars)
        vulkan.synchronize()
        for k in range(2):
            want = [np.zeros(64), x.copy()]
            interpret(kernel, 2, want, [v + 100 * k for v in range(40)])
            got = vulkan.read(bufs[k], np.empty(64))
            np.testing.assert_array_equal(got, want[0])
    finally:
        for b in bufs:
            vulkan.free(b)
        vulkan.destroy(loaded)


def test_kernel_over_the_binding_limit_is_refused():
    from accy.errors import OutOfResources
    from accy_backend_vulkan.target import VulkanTarget

    kernel = many_scalars_kernel(["i32"] * 40)  # 2 buffers + the scalar buffer
    VulkanTarget(max_storage_buffers=3).legalize(kernel)
    with pytest.raises(OutOfResources, match="binds 3 storage buffers"):
        VulkanTarget(max_storage_buffers=2).legalize(kernel)
    VulkanTarget(max_storage_buffers=2, max_push_constant_bytes=256).legalize(kernel)


def test_reduction_with_a_wide_prologue(backend):
    """A reduction whose fused elementwise prologue reads 40 arrays is split too."""
    n = 40
    xs = [RNG.standard_normal((6, 33)).astype(np.float32) for _ in range(n)]

    def program(*arrays):
        acc = arrays[0]
        for a in arrays[1:]:
            acc = acc + a
        return anp.sum(acc * acc, axis=1)

    exe = accy.jit(program, backend=backend).compile(*xs)
    (out,) = exe(*xs)
    acc = functools.reduce(lambda a, c: a + c, xs)
    np.testing.assert_allclose(out, np.sum(acc * acc, axis=1), rtol=1e-5)
    limit = open_backend(backend).capabilities().max_storage_buffers
    if limit is not None:
        assert max(_kernel_buffers(exe)) <= limit
