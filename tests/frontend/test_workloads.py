"""Profiling workloads rewritten with accy.numpy: same results as the builder versions and
as numpy, on every available backend (acceptance of issue 7)."""

from __future__ import annotations

import accy
import pytest
from accy.profiling.workloads import build
from accy.testing import assert_close

from tests.frontend.numpy_workloads import WORKLOADS


@pytest.mark.parametrize("name", sorted(WORKLOADS))
def test_numpy_workload_matches_builder_and_numpy(backend: str, name: str) -> None:
    w = build(name, 16, 8, seed=3)
    jitted = accy.jit(WORKLOADS[name], backend=backend)
    got = jitted(*w.inputs)
    (builder_out,) = accy.compile(w.module, backend=backend)(*w.inputs)
    (want,) = w.reference(w.inputs)
    assert_close(got, want, scale=10, what=f"{name} vs numpy")
    assert_close(got, builder_out, scale=10, what=f"{name} vs builder")
    # traced once, or not at all when the jit index knew it (docs/caches.md)
    assert jitted.trace_count + jitted.index_hits == 1


@pytest.mark.parametrize("name", sorted(WORKLOADS))
def test_numpy_workload_on_device_arrays(backend: str, name: str) -> None:
    w = build(name, 8, 4, seed=5)
    jitted = accy.jit(WORKLOADS[name], backend=backend)
    dev = [accy.asarray(x, backend=backend) for x in w.inputs]
    out = jitted(*dev)
    assert isinstance(out, accy.DeviceArray) and out.backend_name == backend
    (want,) = w.reference(w.inputs)
    assert_close(out.numpy(), want, scale=10, what=name)


def test_retrace_counts_and_compile_exposes_stages(backend: str) -> None:
    w = build("mlp_two_layer", 16, 8)
    jitted = accy.jit(WORKLOADS["mlp_two_layer"], backend=backend)
    jitted(*w.inputs)
    jitted(*w.inputs)
    assert jitted.trace_count + jitted.index_hits == 1  # an index hit traces nothing
    w2 = build("mlp_two_layer", 32, 8)
    jitted(*w2.inputs)
    assert jitted.trace_count + jitted.index_hits == 2
    exe = jitted.compile(*w.inputs)
    assert jitted.trace_count + jitted.index_hits == 2
    assert exe.kernel_count >= 1
    assert "func @mlp_two_layer" in exe.stage_text("contract")
    assert "kernel" in exe.stage_text("kernel")
    assert "linalg.dot_general" in jitted.lower(*w.inputs).to_text()
