"""JAX's ``lax`` names on accy: port JAX code by changing ``from jax import lax`` to
``from accy import lax``.

``fori_loop``, ``while_loop``, ``scan``, ``cond`` (:mod:`accy.frontend.control_flow`),
``select`` (elementwise ``where``), ``dynamic_slice`` and ``dynamic_update_slice``
(:mod:`accy.frontend.dynamic_index`). Inside ``accy.jit`` they trace into loop ops and
dynamic-offset slices that run on the device; on host arrays they compute with numpy.
"""

from __future__ import annotations

from typing import Any

from accy.frontend.control_flow import cond, fori_loop, scan, while_loop
from accy.frontend.dynamic_index import dynamic_slice, dynamic_update_slice

__all__ = ["cond", "dynamic_slice", "dynamic_update_slice", "fori_loop", "scan", "select",
           "while_loop"]


def select(pred: Any, on_true: Any, on_false: Any) -> Any:
    """``jax.lax.select``: ``on_true`` where ``pred`` else ``on_false`` (same shapes)."""
    from accy import numpy as anp

    return anp.where(pred, on_true, on_false)
