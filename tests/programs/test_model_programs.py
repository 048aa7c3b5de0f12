"""Model-shaped programs (quick-suite sizes) against numpy on every available backend."""

from __future__ import annotations

import accy
import pytest
from accy.profiling.workloads import build
from accy.testing import assert_close

QUICK = [
    ("mlp_two_layer", 32, 64),
    ("residual_block", 32, 64),
    ("attention_softmax", 16, 32),
    ("transformer_block", 16, 32),
]


@pytest.mark.parametrize(("name", "elements", "chain"), QUICK, ids=[q[0] for q in QUICK])
def test_model_program_matches_numpy(backend, name, elements, chain):
    wl = build(name, elements, chain)
    exe = accy.compile(wl.module, backend=backend)
    outs = exe(*wl.inputs)
    for got, want in zip(outs, wl.reference(wl.inputs), strict=True):
        assert_close(got, want, what=name)


@pytest.mark.parametrize(("name", "elements", "chain"), QUICK, ids=[q[0] for q in QUICK])
def test_model_program_text_round_trip(name, elements, chain):
    wl = build(name, elements, chain)
    again = accy.parse_module(wl.module.to_text())
    assert again.fingerprint() == wl.module.fingerprint()
    assert again.to_text() == wl.module.to_text()


def test_changing_one_op_changes_fingerprint():
    wl = build("mlp_two_layer", 32, 64)
    text = wl.module.to_text()
    assert "arith.add" in text
    changed = accy.parse_module(text.replace("arith.add", "arith.sub", 1))
    assert changed.fingerprint() != wl.module.fingerprint()


def test_repeated_calls_reuse_buffers_and_agree(backend):
    wl = build("attention_softmax", 16, 32)
    exe = accy.compile(wl.module, backend=backend)
    first = exe(*wl.inputs)[0].copy()
    for _ in range(5):
        assert_close(exe(*wl.inputs)[0], first)
