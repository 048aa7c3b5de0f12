"""Every profiling workload at its quick-suite size matches its numpy reference, on every
available backend, and its program round-trips through the text form."""

from __future__ import annotations

import accy
import pytest
from accy.profiling.suites import SUITES
from accy.profiling.workloads import build
from accy.testing import assert_close

QUICK = SUITES["quick"]


@pytest.mark.parametrize(("name", "elements", "chain"), QUICK, ids=[c[0] for c in QUICK])
def test_workload_matches_numpy(backend, name, elements, chain):
    wl = build(name, elements, chain)
    exe = accy.compile(wl.module, backend=backend, tuning=False)
    for got, want in zip(exe(*wl.inputs), wl.reference(wl.inputs), strict=True):
        assert_close(got, want, scale=10, what=name)


@pytest.mark.parametrize(("name", "elements", "chain"), QUICK, ids=[c[0] for c in QUICK])
def test_workload_text_round_trip(name, elements, chain):
    wl = build(name, elements, chain)
    assert accy.parse_module(wl.module.to_text()).fingerprint() == wl.module.fingerprint()


def test_odd_sizes_still_match_numpy():
    for name, elements, chain in [("indexing_mix", 90, 3), ("halo_stencil", 7, 3),
                                  ("nbody_all_pairs", 5, 2), ("reduction_row_norm", 3, 1500)]:
        wl = build(name, elements, chain, seed=4)
        got = accy.compile(wl.module, backend="cpu", tuning=False)(*wl.inputs)
        for g, w in zip(got, wl.reference(wl.inputs), strict=True):
            assert_close(g, w, scale=10, what=f"{name} {elements}/{chain}")
