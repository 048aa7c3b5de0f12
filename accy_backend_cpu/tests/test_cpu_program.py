"""Whole programs on the CPU backend: one LLVM module and one JIT engine per executable."""

from __future__ import annotations

import numpy as np
import pytest
from accy.backend import Geometry
from accy.errors import LaunchError, VerifyError
from accy.kernel import KernelBuilder


def add_kernel(name: str, value: float, ws: int = 32):
    kb = KernelBuilder(name, ws)
    o, x = kb.buffer("o", "f32", "write"), kb.buffer("x", "f32", "read")
    n = kb.scalar("n", "i32")
    i = kb.global_id()
    with kb.if_(i < n):
        kb.store(o, i, x[i] + value)
    return kb.build()


def run(cpu, loaded, x):
    out = np.zeros_like(x)
    cpu.launch(loaded, Geometry(2, 32), [cpu.import_host(out), cpu.import_host(x)],
               [("i32", x.size)])
    return out


def test_program_is_one_object_and_one_engine(cpu):
    kernels = [add_kernel("plus_one", 1.0), add_kernel("plus_two", 2.0),
               add_kernel("plus_one_again", 1.0)]
    art = cpu.compile_program(kernels, name="three")
    # kernels equal up to their name share one function
    assert art.metadata["entries"] == {"plus_one": "plus_one", "plus_two": "plus_two",
                                       "plus_one_again": "plus_one"}
    loaded = cpu.load_program(art)
    assert sorted(loaded) == ["plus_one", "plus_one_again", "plus_two"]
    assert len({id(lk.engine) for lk in loaded.values()}) == 1
    x = np.arange(40, dtype=np.float32)
    np.testing.assert_array_equal(run(cpu, loaded["plus_one"], x), x + 1)
    np.testing.assert_array_equal(run(cpu, loaded["plus_two"], x), x + 2)
    np.testing.assert_array_equal(run(cpu, loaded["plus_one_again"], x), x + 1)
    with pytest.raises(LaunchError, match="expected 2 buffers"):  # same checks as load()
        cpu.launch(loaded["plus_two"], Geometry(1, 32), [cpu.allocate(128)], [("i32", 1)])


def test_program_refuses_duplicate_names_and_single_artifacts(cpu):
    with pytest.raises(VerifyError, match="two kernels named"):
        cpu.compile_program([add_kernel("k", 1.0), add_kernel("k", 2.0)])
    with pytest.raises(LaunchError, match="not a program"):
        cpu.load_program(cpu.compile(add_kernel("single", 1.0)))


def test_compiled_module_shares_one_engine():
    import accy

    b = accy.Builder()
    t = b.tensor("f32", (64, 8))
    fb = b.begin_function("multi", params=[t])
    x = fb.param(0)
    s = fb.reduce_sum(fb.mul(x, 2.0), axes=[1])  # a reduction and an elementwise result
    fb.return_(fb.add(fb.exp(x), 1.0), s)
    fb.finish()
    exe = accy.compile(b.finish(), backend="cpu", use_cache=False)
    assert len(exe.kernels) >= 2
    assert len({id(lk.engine) for lk in exe._loaded.values()}) == 1
    x = np.random.default_rng(0).standard_normal((64, 8)).astype(np.float32)
    got_a, got_s = exe(x)
    np.testing.assert_allclose(got_s, (2 * x).sum(axis=1), rtol=1e-5)
    np.testing.assert_allclose(got_a, np.exp(x) + 1, rtol=1e-5)


def test_large_program_compiles_in_parts_into_one_engine(cpu, monkeypatch):
    from accy_backend_cpu.program_parts import MIN_PARALLEL_KERNELS

    from accy_backend_cpu import shared_object

    values = [float(v) for v in range(1, MIN_PARALLEL_KERNELS + 2)]
    kernels = [add_kernel(f"plus_{i}", v) for i, v in enumerate(values)]
    kernels.append(add_kernel("plus_0_again", values[0]))  # deduplicated before the split
    x = np.arange(40, dtype=np.float32)
    if shared_object.linker_commands():  # the parts link into one shared object
        monkeypatch.setenv("ACCY_CODEGEN_WORKERS", "2")
        linked = cpu.compile_program(kernels, name="linked")
        assert linked.format == "so" and "objects" not in linked.metadata
        loaded = cpu.load_program(linked)
        assert len({id(lk.engine) for lk in loaded.values()}) == 1
        for i, v in enumerate(values):
            np.testing.assert_array_equal(run(cpu, loaded[f"plus_{i}"], x), x + v)
    monkeypatch.setattr(shared_object, "linker_commands", list)  # object code for MCJIT
    monkeypatch.setenv("ACCY_CODEGEN_WORKERS", "1")
    serial = cpu.compile_program(kernels, name="serial")
    monkeypatch.setenv("ACCY_CODEGEN_WORKERS", "2")
    art = cpu.compile_program(kernels, name="parts")
    assert len(serial.metadata["objects"]) == 1
    assert len(art.metadata["objects"]) > 1 and sum(art.metadata["objects"]) == len(art.data)
    assert art.metadata["entries"] == serial.metadata["entries"]
    assert art.metadata["entries"]["plus_0_again"] == "plus_0"
    for artifact in (serial, art):
        loaded = cpu.load_program(artifact)
        assert len({id(lk.engine) for lk in loaded.values()}) == 1
        for i, v in enumerate(values):
            np.testing.assert_array_equal(run(cpu, loaded[f"plus_{i}"], x), x + v)
        np.testing.assert_array_equal(run(cpu, loaded["plus_0_again"], x), x + values[0])


def test_corrupt_object_sizes_are_a_launch_error(cpu, monkeypatch):
    from dataclasses import replace

    from accy_backend_cpu import shared_object

    monkeypatch.setattr(shared_object, "linker_commands", list)  # object code for MCJIT
    art = cpu.compile_program([add_kernel("one", 1.0)], name="one")
    bad = replace(art, metadata={**art.metadata, "objects": [1, len(art.data)]})
    with pytest.raises(LaunchError, match="do not split"):
        cpu.load_program(bad)


def test_partition_balances_and_keeps_every_item():
    from accy_backend_cpu.program_parts import partition

    weights = [50, 10, 40, 10, 30, 20, 20]
    groups = partition(list(range(7)), weights, 3)
    assert sorted(i for g in groups for i in g) == list(range(7))
    totals = [sum(weights[i] for i in g) for g in groups]
    assert totals == sorted(totals, reverse=True) and max(totals) - min(totals) <= 10
    assert all(g == sorted(g) for g in groups)
    assert partition(list(range(7)), weights, 3) == groups  # deterministic
    assert partition([1, 2], [5, 5], 8) == [[1], [2]] and partition([1], [5], 1) == [[1]]
