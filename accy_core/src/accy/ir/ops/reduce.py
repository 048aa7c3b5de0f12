"""``reduce`` ops: sum, max, min and mean over a set of axes.

Example::

    %1 = reduce.sum %0 {axes = [1], keepdims = false} : (f32[32,128]) -> f32[32]

``axes`` may be negative; an empty ``axes`` list reduces nothing. ``max``/``min`` over an
axis of extent 0 are rejected by the verifier (numpy raises there too); ``sum`` gives 0 and
``mean`` gives NaN. Integer ``mean`` is not defined (cast to a float dtype first).
"""

from __future__ import annotations

import warnings

import numpy as np

from accy.ir.ops.common import FLOATS, NUMERIC, fail, normalize_axes, require_dtype
from accy.ir.ops.registry import OpDef, register_op


def reduced_shape(shape: tuple[int, ...], axes: tuple[int, ...], keepdims: bool) -> tuple[int, ...]:
    """Shape after reducing ``axes`` (already normalized)."""
    if keepdims:
        return tuple(1 if i in axes else s for i, s in enumerate(shape))
    return tuple(s for i, s in enumerate(shape) if i not in axes)


def _def(kind: str, fn, allowed) -> OpDef:
    full = f"reduce.{kind}"

    def infer(types, attrs):
        t = types[0]
        require_dtype(full, t, allowed)
        axes = normalize_axes(full, attrs["axes"], t.rank)
        if kind in ("max", "min") and any(t.shape[a] == 0 for a in axes):
            raise fail(full, f"cannot reduce an axis of extent 0 in {t} (no identity for {kind})")
        return [t.with_shape(reduced_shape(t.shape, axes, bool(attrs["keepdims"])))]

    def ref(xs, attrs):
        x = xs[0]
        axes = normalize_axes(full, attrs["axes"], x.ndim)
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # mean of an empty axis is NaN
            r = fn(x, axis=axes, keepdims=bool(attrs["keepdims"]))
        return [np.asarray(r).astype(x.dtype)]

    return OpDef(full, 1, infer, ref, attrs={"axes": "ints"},
                 optional_attrs={"keepdims": ("bool", False)},
                 traits=frozenset({"pure", "reduction"}), summary=f"{kind} over axes")


register_op(_def("sum", np.sum, NUMERIC))
register_op(_def("max", np.max, NUMERIC))
register_op(_def("min", np.min, NUMERIC))
register_op(_def("mean", np.mean, FLOATS))

__all__ = ["reduced_shape"]
