"""The profiling-suite workloads written with ``accy.numpy`` (mirrors of the builder versions
in :mod:`accy.profiling.workloads`), used by the cross-package frontend tests."""

from __future__ import annotations

import accy.numpy as anp
import numpy as np


def mlp_two_layer(x, w1, b1, w2, b2):
    return anp.maximum(x @ w1 + b1, 0) @ w2 + b2


def residual_block(x, w1, b1, w2):
    return anp.relu(x + anp.relu(x @ w1 + b1) @ w2)


def attention_softmax(q, k, v):
    scores = anp.einsum("qd,kd->qk", q, k) * (1.0 / np.sqrt(q.shape[-1]))
    return anp.softmax(scores, axis=-1) @ v


def layer_norm(x, gamma, beta, eps=1e-5):
    mu = x.mean(axis=-1, keepdims=True)
    d = x - mu
    var = (d * d).mean(axis=-1, keepdims=True)
    return d * anp.rsqrt(var + eps) * gamma + beta


def transformer_block(x, g1, be1, wq, wk, wv, wo, g2, be2, w1, c1, w2, c2):
    s, d = x.shape
    y = layer_norm(x, g1, be1)
    q, k, v = y @ wq, y @ wk, y @ wv
    scores = q @ k.T * (1.0 / np.sqrt(d))
    h = x + anp.softmax(scores, axis=-1) @ v @ wo
    z = layer_norm(h, g2, be2)
    return h + anp.gelu(z @ w1 + c1) @ w2 + c2


WORKLOADS = {
    "mlp_two_layer": mlp_two_layer,
    "residual_block": residual_block,
    "attention_softmax": attention_softmax,
    "transformer_block": transformer_block,
}
