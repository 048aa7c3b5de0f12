"""VulkanBackend on a real device (lavapipe in CI); skips with the probe's reason."""

from __future__ import annotations

import gc
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import vulkan_kernels as K
from accy.backend import Geometry
from accy.errors import CapabilityError, LaunchError
from accy.testing.kernels import run_kernel as run

RNG = np.random.default_rng(7)


@pytest.mark.parametrize("dtype", ["f32", "f64"])
@pytest.mark.parametrize("flip", [False, True])
def test_scalars_of_every_kind(vk, dtype, flip):
    npd = {"f32": np.float32, "f64": np.float64}[dtype]
    x = RNG.standard_normal(100).astype(npd)
    y, _ = run(vk, K.scale(dtype), 2, [np.zeros(128, npd), np.resize(x, 128)], [100, 1.5, 3, flip])
    want = (1.5 * x + 3) * (-1 if flip else 1)
    np.testing.assert_allclose(y[:100], want, rtol=1e-6)
    assert not y[100:].any()


@pytest.mark.parametrize("op", ["exp", "log", "sqrt", "tanh", "sin", "cos", "floor", "rsqrt"])
def test_f32_math(vk, op):
    x = np.abs(RNG.standard_normal(64)).astype(np.float32) + 0.25
    y, _ = run(vk, K.unary_f(op), 2, [np.zeros(64, np.float32), x], [64])
    ref = (lambda v: 1 / np.sqrt(v)) if op == "rsqrt" else getattr(np, op)
    np.testing.assert_allclose(y, ref(x), rtol=2e-6, atol=1e-6)


def test_f64_exp_is_a_capability_error(vk):
    assert "f64_math" not in vk.capabilities().features
    with pytest.raises(CapabilityError, match="f64 exp"):
        vk.compile(K.unary_f("exp", "f64"))


def test_shared_memory_tree_reduction_with_barriers(vk):
    x = RNG.standard_normal(64 * 5).astype(np.float32)
    out, _ = run(vk, K.tree_sum(), 5, [np.zeros(5, np.float32), x], [])
    np.testing.assert_allclose(out, x.reshape(5, 64).sum(axis=1), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("dtype", ["i32", "f32"])
def test_atomics(vk, dtype):
    if dtype == "f32" and "float_atomics" not in vk.capabilities().features:
        pytest.skip("device has no float atomics")
    npd = {"i32": np.int32, "f32": np.float32}[dtype]
    x = RNG.integers(0, 1000, 1000).astype(np.int32)
    hist, top, _ = run(
        vk,
        K.histogram(dtype),
        16,
        [np.zeros(8, npd), np.zeros(1, np.int32), np.resize(x, 1024)],
        [1000],
    )
    np.testing.assert_array_equal(hist, np.bincount(x % 8, minlength=8).astype(npd))
    if dtype == "i32":
        assert top[0] == x.max()


def test_grid_larger_than_the_dispatch_limit(vk):
    groups = int(vk._props.limits.maxComputeWorkGroupCount[0]) + 1000
    (out,) = run(vk, K.group_ids(), groups, [np.full(groups, -1, np.int32)], [])
    g = np.arange(groups, dtype=np.int64)
    np.testing.assert_array_equal(out, (g * 1000 + groups).astype(np.int32))


def test_loop_and_bool_buffer(vk):
    x = RNG.standard_normal(40).astype(np.float32)
    mask, _ = run(vk, K.loop_bool(), 3, [np.zeros(48, np.bool_), np.resize(x, 48)], [40, 0.5])
    np.testing.assert_array_equal(mask[:40], np.cumsum(x) > 0.5)


def test_launch_argument_errors(vk):
    loaded = vk.load(vk.compile(K.unary_f("exp")))
    buf = vk.allocate(256)
    with pytest.raises(LaunchError, match="expected 2 buffers"):
        vk.launch(loaded, Geometry(1, 32), [buf], [("i32", 1)])
    with pytest.raises(LaunchError, match="workgroup_size"):
        vk.launch(loaded, Geometry(1, 64), [buf, buf], [("i32", 1)])
    with pytest.raises(LaunchError, match="must be i32"):
        vk.launch(loaded, Geometry(1, 32), [buf, buf], [("f32", 1.0)])
    vk.free(buf)
    vk.destroy(loaded)


def test_thousand_calls_leave_allocations_unchanged(vk):
    import accy

    b = accy.Builder()
    t = b.tensor("f32", (300,))
    fb = b.begin_function("leak", params=[t, t])
    fb.return_(fb.reduce_sum(fb.exp(fb.add(fb.param(0), fb.param(1))), axes=[0]))
    fb.finish()
    exe = accy.compile(b.finish(), backend="vulkan")
    x = RNG.standard_normal(300).astype(np.float32) * 0.1
    for _ in range(3):  # warm-up: persistent temporaries, buffer free-list order
        exe(x, x)
    # executables of earlier tests share this device: collect them now, and keep the
    # collector from releasing their objects in the middle of the count
    gc.collect()
    gc.disable()
    try:
        before = vk.live_objects()
        sets_before = sum(len(k.descriptor_sets) for k in exe._loaded.values())
        for _ in range(1000):
            (out,) = exe(x, x)
        after = vk.live_objects()
    finally:
        gc.enable()
    assert after == before
    assert sum(len(k.descriptor_sets) for k in exe._loaded.values()) == sets_before
    np.testing.assert_allclose(out, np.exp(x + x).sum(), rtol=1e-5)


def test_emit_spirv_and_llvm(vk):
    spirv = vk.emit(K.scale(), "spirv")
    assert spirv[:4] == b"\x03\x02\x23\x07"
    assert b"hlsl.numthreads" in vk.emit(K.scale(), "llvm")


def test_backends_without_a_loader_says_why(tmp_path):
    fake = tmp_path / "vulkan"
    fake.mkdir()
    (fake / "__init__.py").write_text("raise OSError('cannot load library libvulkan.so.1')\n")
    env = dict(
        os.environ, PYTHONPATH=os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")])
    )
    code = textwrap.dedent("""
        from accy.cli.main import main
        raise SystemExit(main(["backends"]))
    """)
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120
    )
    assert result.returncode == 0, result.stderr
    line = next(ln for ln in result.stdout.splitlines() if "vulkan" in ln)
    assert "unavailable" in line and "libvulkan" in line
    assert any(ln.startswith("cpu") or " cpu" in ln for ln in result.stdout.splitlines())
