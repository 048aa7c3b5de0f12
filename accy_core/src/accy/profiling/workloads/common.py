"""What every workload module provides, and numpy helpers for their references."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from accy.ir import Builder, FunctionBuilder, Module, Value

__all__ = ["Workload", "layer_norm", "np_gelu", "np_layer_norm", "rng_inputs"]


@dataclass(frozen=True)
class Workload:
    """A ready-to-run program of the profiling suite.

    Attributes:
        name: workload name (``mlp_two_layer``).
        elements: the size parameter (rows, bodies, grid extent: see each module).
        chain: the second parameter (width, chain length: see each module).
        module: the builder program.
        inputs: host inputs, one per parameter.
        reference: numpy computation of the same workload (the oracle).
    """

    name: str
    elements: int
    chain: int
    module: Module
    inputs: list[np.ndarray]
    reference: Callable[[list[np.ndarray]], list[np.ndarray]]


def rng_inputs(seed: int, shapes: list[tuple[int, ...]], scale: float = 1.0) -> list[np.ndarray]:
    """Standard-normal f32 arrays (times ``scale``) of the given shapes."""
    rng = np.random.default_rng(seed)
    return [(rng.standard_normal(s) * scale).astype(np.float32) for s in shapes]


def layer_norm(
    fb: FunctionBuilder, x: Value, gamma: Value, beta: Value, eps: float = 1e-5
) -> Value:
    """Layer norm over the last axis, written from primitives (mean, variance, rsqrt)."""
    axis = x.type.rank - 1
    mu = fb.reduce_mean(x, axes=[axis], keepdims=True)
    d = fb.sub(x, mu)
    var = fb.reduce_mean(fb.mul(d, d), axes=[axis], keepdims=True)
    return fb.add(fb.mul(fb.mul(d, fb.rsqrt(fb.add(var, eps))), gamma), beta)


def np_layer_norm(
    x: np.ndarray, gamma: np.ndarray, beta: np.ndarray, eps: float = 1e-5
) -> np.ndarray:
    mu = x.mean(axis=-1, keepdims=True)
    d = x - mu
    var = (d * d).mean(axis=-1, keepdims=True)
    return (d / np.sqrt(var + np.float32(eps)) * gamma + beta).astype(x.dtype)


def np_gelu(x: np.ndarray) -> np.ndarray:
    c = np.float32(np.sqrt(2.0 / np.pi))
    return (0.5 * x * (1 + np.tanh(c * (x + np.float32(0.044715) * x**3)))).astype(x.dtype)


def new_function(name: str, params: list[tuple[int, ...]]) -> tuple[Builder, FunctionBuilder]:
    b = Builder()
    fb = b.begin_function(name, params=[b.tensor("f32", s) for s in params])
    return b, fb
