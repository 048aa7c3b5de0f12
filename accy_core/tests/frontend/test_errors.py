"""Bad input to the frontend: clear errors that name the user's line and the fix."""

from __future__ import annotations

import inspect
import pickle

import accy
import accy.numpy as anp
import numpy as np
import pytest
from accy.errors import AccyError, InputError, UnsupportedError, VerifyError
from accy.frontend import TracerConversionError, UnsupportedFunctionError


def _line_of(fn, text: str) -> str:
    src, start = inspect.getsourcelines(fn)
    for k, line in enumerate(src):
        if text in line:
            return f"test_errors.py:{start + k}"
    raise AssertionError(text)


def test_python_if_on_traced_array_explains_trace_time_control_flow() -> None:
    def f(x):
        if x.sum() > 0:
            return x
        return -x

    with pytest.raises(TracerConversionError) as info:
        accy.jit(f, backend="reference")(np.ones(3, np.float32))
    msg = str(info.value)
    assert _line_of(f, "if x.sum()") in msg
    assert "trace time" in msg and "anp.where" in msg and "static_argnums" in msg
    assert isinstance(info.value, UnsupportedError) and isinstance(info.value, TypeError)


@pytest.mark.parametrize("convert", [int, float, bool, lambda t: np.asarray(t),
                                     lambda t: [0, 1][t]])
def test_other_concretizations_raise(convert) -> None:
    with pytest.raises(TracerConversionError, match="needs its value"):
        accy.jit(lambda x: convert(x), backend="reference")(np.ones((), np.int32))


def test_shape_mismatch_names_expression_and_line() -> None:
    def model(a, b):
        return a + b

    with pytest.raises(VerifyError) as info:
        accy.jit(model, backend="reference")(np.ones(3, np.float32), np.ones(4, np.float32))
    msg = str(info.value)
    assert msg.startswith(f"shape mismatch in a + b at {_line_of(model, 'return a + b')}")
    assert "[3] and [4]" in msg


def test_matmul_mismatch_names_line() -> None:
    def model(a, b):
        return a @ b

    with pytest.raises(VerifyError, match=r"shape mismatch in a @ b at test_errors.py:\d+: "
                                          r"contracting extents 3 and 4 differ"):
        accy.jit(model, backend="reference")(np.ones((2, 3), np.float32),
                                             np.ones((4, 5), np.float32))


def test_builder_errors_carry_the_user_line() -> None:
    def model(x):
        return anp.softmax(x.astype(np.float32), axis=5)

    with pytest.raises(VerifyError, match=_line_of(model, "softmax")):
        accy.jit(model, backend="reference")(np.ones((2, 3), np.float32))


def test_unsupported_numpy_function_names_it_and_alternatives() -> None:
    with pytest.raises(UnsupportedFunctionError) as info:
        anp.unique  # noqa: B018
    msg = str(info.value)
    assert msg.startswith("accy.numpy.unique: numpy.unique is not supported by accy")
    assert "supported alternatives: " in msg and "where(cond, x, 0)" in msg
    assert info.value.feature == "numpy.unique"
    assert isinstance(info.value, AttributeError) and not hasattr(anp, "fft")
    with pytest.raises(AttributeError, match="supported alternatives: .*sum"):
        anp.nanstd  # noqa: B018
    assert pickle.loads(pickle.dumps(info.value)).feature == "numpy.unique"


def test_floor_divide_of_bools_is_refused_with_alternative() -> None:
    with pytest.raises(UnsupportedError, match="'//'.*bool arrays.*astype"):
        accy.jit(lambda x: (x > 0) // (x > 1), backend="reference")(np.ones(3, np.int32))


def test_leaked_tracer_is_refused() -> None:
    box = []

    @accy.jit(backend="reference")
    def leak(x):
        box.append(x)
        return x

    leak(np.ones(2, np.float32))
    with pytest.raises(UnsupportedError, match="used outside it"):
        accy.jit(lambda y: y + box[0], backend="reference")(np.ones(2, np.float32))


def test_bad_arguments() -> None:
    f = accy.jit(lambda x: x, backend="reference")
    with pytest.raises(InputError, match="float16 is not supported.*astype"):
        f(np.ones(2, np.float16))
    with pytest.raises(InputError, match="neither an array nor a hashable"):
        f({1, 2}.__class__.__new__(set) if False else [{}, set()])


def test_boolean_mask_indexing_is_refused() -> None:
    with pytest.raises(UnsupportedError, match="boolean mask.*anp.where"):
        accy.jit(lambda x: x[x > 0], backend="reference")(np.ones(3, np.float32))


def test_errors_are_accy_errors() -> None:
    assert issubclass(TracerConversionError, AccyError)
    assert issubclass(UnsupportedFunctionError, AccyError)
