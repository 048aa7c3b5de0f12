"""Property: random small elementwise programs built with the builder round-trip through text."""

from __future__ import annotations

import accy
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

FLOAT_UNARY = ["neg", "abs", "exp", "log", "sqrt", "rsqrt", "tanh", "sin", "cos", "sigmoid",
               "relu", "gelu"]
INT_UNARY = ["neg", "abs"]
BINARY = ["add", "sub", "mul", "div", "max", "min"]
COMPARE = ["eq", "ne", "lt", "le", "gt", "ge"]
DTYPES = ["f32", "f64", "i32", "i64"]

shapes = st.lists(st.integers(0, 3), min_size=0, max_size=3).map(tuple)


def _trailing(shape: tuple[int, ...], draw) -> tuple[int, ...]:
    """A shape broadcast-compatible with ``shape``: a suffix with some extents set to 1."""
    k = draw(st.integers(0, len(shape)))
    suffix = shape[len(shape) - k:]
    return tuple(1 if draw(st.booleans()) else s for s in suffix)


@st.composite
def programs(draw) -> accy.Module:
    dtype = draw(st.sampled_from(DTYPES))
    is_float = dtype.startswith("f")
    shape = draw(shapes)
    b = accy.Builder()
    params = [b.tensor(dtype, shape), b.tensor(dtype, _trailing(shape, draw))]
    fb = b.begin_function(draw(st.sampled_from(["main", "f", "kernel_0"])), params=params)
    values = [fb.param(0), fb.param(1)]
    n_ops = draw(st.integers(1, 8))
    for _ in range(n_ops):
        kind = draw(st.sampled_from(["unary", "binary", "scalar", "select", "cast"]))
        x = draw(st.sampled_from(values))
        if kind == "unary":
            values.append(getattr(fb, draw(st.sampled_from(FLOAT_UNARY if is_float else INT_UNARY)))(x))
        elif kind == "binary":
            y = draw(st.sampled_from(values))
            values.append(getattr(fb, draw(st.sampled_from(BINARY)))(x, y))
        elif kind == "scalar":
            if is_float:
                c = draw(st.floats(allow_nan=True, allow_infinity=True, width=32))
            else:
                c = draw(st.integers(-100, 100))
            op = draw(st.sampled_from(BINARY))
            values.append(getattr(fb, op)(c, x) if draw(st.booleans()) else getattr(fb, op)(x, c))
        elif kind == "select":
            y = draw(st.sampled_from(values))
            cond = getattr(fb, draw(st.sampled_from(COMPARE)))(x, y)
            values.append(fb.select(cond, x, y))
        else:
            other = draw(st.sampled_from([d for d in DTYPES if d != dtype]))
            values.append(fb.cast(fb.cast(x, other), dtype))
    if draw(st.booleans()):
        values.append(fb.constant(b.tensor(dtype, shape), draw(_arrays(dtype, shape))))
    if draw(st.booleans()):  # around the threshold between list and hex constants
        big = (draw(st.integers(60, 70)),)
        values.append(fb.constant(b.tensor(dtype, big), draw(_arrays(dtype, big))))
    n_results = draw(st.integers(1, 3))
    fb.return_(*draw(st.lists(st.sampled_from(values), min_size=n_results, max_size=n_results)))
    fb.finish()
    return b.finish()


def _arrays(dtype: str, shape: tuple[int, ...]):
    npd = accy.DType.parse(dtype).numpy
    n = int(np.prod(shape))
    if dtype.startswith("f"):
        elems = st.floats(allow_nan=True, allow_infinity=True, width=32 if dtype == "f32" else 64)
    else:
        info = np.iinfo(npd)
        elems = st.integers(int(info.min), int(info.max))
    return st.lists(elems, min_size=n, max_size=n).map(lambda xs: np.array(xs, dtype=npd).reshape(shape))


@settings(max_examples=150, deadline=None)
@given(programs())
def test_builder_programs_round_trip_through_text(module: accy.Module) -> None:
    text = module.to_text()
    parsed = accy.parse_module(text)
    assert parsed.to_text() == text
    assert parsed.fingerprint() == module.fingerprint()
    assert parsed.clone().fingerprint() == module.fingerprint()
