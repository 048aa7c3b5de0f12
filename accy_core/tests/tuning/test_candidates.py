"""Launch candidates: at most 8, default first, subgroup rounding, labels; every candidate
of a region computes the same result; explicit choices override and are checked."""

from __future__ import annotations

import numpy as np
import pytest
from accy.errors import InputError
from accy.ir import Builder
from accy.testing import assert_close
from accy.tuning import (
    MAX_CANDIDATES,
    LaunchCandidate,
    default_candidate,
    parse_candidates,
    region_candidates,
)


@pytest.mark.parametrize(("kind", "n_out", "n_red"),
                         [("map", 10, 0), ("map", 1 << 20, 0), ("reduce", 4, 4096),
                          ("reduce", 5000, 300), ("reduce", 1, 3)])
def test_candidates_are_bounded_default_first_and_rounded(kind, n_out, n_red):
    cands = region_candidates(kind, n_out, n_red, subgroup_size=48, max_workgroup_size=512)
    assert 1 <= len(cands) <= MAX_CANDIDATES
    assert cands[0] == default_candidate(kind, n_out, n_red)
    assert len(set(cands)) == len(cands)
    for c in cands[1:]:
        assert c.workgroup_size % 48 == 0 and c.workgroup_size <= 512


def test_default_matches_the_outliners_historic_choice():
    assert default_candidate("map", 100) == LaunchCandidate("map", 128, 1)
    assert default_candidate("map", 10) == LaunchCandidate("map", 32, 1)
    assert default_candidate("reduce", 64, 1024).variant == "tree"
    assert default_candidate("reduce", 65, 1024).variant == "serial"


def test_labels_round_trip_and_bad_labels_say_the_form():
    c = LaunchCandidate("serial", 64, 4)
    assert LaunchCandidate.parse(c.label()) == c
    assert parse_candidates("map-wg64-ipt1,tree-wg128-ipt1")[1].variant == "tree"
    with pytest.raises(InputError, match="serial-wg64-ipt1"):
        LaunchCandidate.parse("wg64")


def _program():
    b = Builder()
    fb = b.begin_function("main", params=[b.tensor("f32", (3, 700)), b.tensor("f32", (300,))])
    x, y = fb.param(0), fb.param(1)
    fb.return_(fb.reduce_sum(fb.mul(x, x), axes=[1]), fb.tanh(fb.add(y, 1.0)))
    fb.finish()
    return b.finish()


def test_every_candidate_computes_the_same_result():
    import accy

    module = _program()
    rng = np.random.default_rng(0)
    x = rng.standard_normal((3, 700)).astype(np.float32)
    y = rng.standard_normal(300).astype(np.float32)
    base = accy.compile(module, "recording", tuning=False)
    regions = [op for op in base.module.functions[0].body.ops if op.name == "dispatch.region"]
    assert all(op.attrs["candidates"] for op in regions)
    per_kernel = {op.attrs["kernel"]: parse_candidates(op.attrs["candidates"]) for op in regions}
    assert any(c.variant == "tree" for cs in per_kernel.values() for c in cs)
    for i in range(max(len(c) for c in per_kernel.values())):
        choice = {k: cs[min(i, len(cs) - 1)] for k, cs in per_kernel.items()}
        exe = accy.compile(module, "recording", launch=choice)
        got = exe(x, y)
        assert_close(got[0], (x * x).sum(axis=1), scale=10, what=f"candidate {i}")
        assert_close(got[1], np.tanh(y + 1), what=f"candidate {i}")
        for op in exe.module.functions[0].body.ops:
            if op.name == "dispatch.region" and choice[op.attrs["kernel"]] != \
                    per_kernel[op.attrs["kernel"]][0]:
                assert op.attrs["candidate_source"] == "explicit"
                assert op.attrs["workgroup_size"] == choice[op.attrs["kernel"]].workgroup_size


def test_an_explicit_choice_outside_the_candidates_is_refused():
    import accy

    with pytest.raises(InputError, match="is not one of its candidates"):
        accy.compile(_program(), "recording", launch={"main_k0_reduce": "tree-wg1024-ipt1"})
