"""complex64 / complex128 under ``accy.jit`` against numpy (a complex array is a pair of
float arrays: ``accy.frontend.complex_api``).

One program per (backend, dtype) computes every op class: ``+ - * /``, ``abs``, ``angle``,
``conj``, ``real``, ``imag``, ``exp``, ``sum``, ``mean``, ``prod``, matmul/dot, ``astype``,
``==``/``!=``, with NaN+NaNj, inf+NaNj and -inf+1j among the values. Vulkan refuses
complex128 ``exp`` by capability (no f64 transcendentals).
"""

from __future__ import annotations

import accy
import accy.numpy as anp
import numpy as np
import pytest
from accy.errors import CapabilityError, UnsupportedError

RNG = np.random.default_rng(5)


def _data(cdt):
    def c(*shape):
        return (RNG.standard_normal(shape) + 1j * RNG.standard_normal(shape)).astype(cdt)

    z, w = c(7), c(7)
    z[0], z[1], z[2] = complex(np.nan, np.nan), complex(np.inf, np.nan), complex(-np.inf, 1.0)
    return z, w, c(3, 4), c(4, 2)


def _program(z, w, a, b):
    """Works on numpy arrays and under ``accy.jit`` alike."""
    return {
        "add": z + w, "sub": z - w, "mul": z * w, "div": z / w, "neg": -z,
        "scalar": z * 2.0 + 1j, "real_times": z.real * w, "by_real": w / 2.0,
        "abs": anp.abs(z), "angle": anp.angle(w), "conj": anp.conj(z), "real": z.real,
        "imag": anp.imag(z), "exp": anp.exp(w), "eq": z == z, "ne": z != w,
        "sum": anp.sum(w), "mean": w.mean(), "prod": anp.prod(w), "rows": a.sum(axis=1),
        "prod0": anp.prod(a, axis=0), "matmul": a @ b, "dot": anp.dot(a, b),
        "wider": w.astype(np.complex128), "to_real": anp.real(w).astype(np.float32),
        "from_real": anp.astype(a.real, a.dtype), "index": a[1:, ::2],
    }


def _check(got, want, rtol):
    for name, w in want.items():
        g, w = np.asarray(got[name]), np.asarray(w)
        assert g.dtype == w.dtype, (name, g.dtype, w.dtype)
        np.testing.assert_allclose(g, w, rtol=rtol, atol=rtol, equal_nan=True, err_msg=name)


@pytest.mark.parametrize(("backend", "cdt"), [("cpu", np.complex64), ("cpu", np.complex128),
                                               ("vulkan", np.complex64)])
def test_complex_equals_numpy(backend, cdt):
    from accy.plugins import backend_descriptors

    desc = backend_descriptors().get(backend)
    if desc is None or not desc.probe().available:
        pytest.skip(f"{backend} unavailable")
    args = _data(cdt)
    with np.errstate(all="ignore"):
        want = _program(*args)
    _check(accy.jit(_program, backend=backend)(*args), want,
           1e-5 if cdt == np.complex64 else 1e-12)


def test_edge_values_and_the_boundary():
    """abs(inf + NaN j) = inf (C99), NaN + NaN j stays NaN; a complex argument and result
    cross the boundary as pairs (the IR has only floats)."""
    z = np.array([complex(np.inf, np.nan), complex(np.nan, np.nan), 3 + 4j, 0j], np.complex64)
    f = accy.jit(lambda z: (anp.abs(z), z * 1))
    for _ in range(2):  # the second call takes the warm path
        mag, same = f(z)
        np.testing.assert_array_equal(mag, np.array([np.inf, np.nan, 5.0, 0.0], np.float32))
        np.testing.assert_array_equal(same, z * 1)
    g = accy.jit(lambda x: x * 2)  # a real call first, then complex ones of the same shape
    g(z.real.copy())
    np.testing.assert_array_equal(g(z), z * 2)
    np.testing.assert_array_equal(g(z), z * 2)
    text = f.lower(z).to_text()
    assert "complex" not in text and "f32[4]" in text


@pytest.mark.parametrize("cdt", [np.complex64, np.complex128])
def test_division_has_numpys_bits_and_its_zero_divisor(cdt):
    """numpy multiplies by scl = 1 / (br + bi * rat) (accy divided: an ulp off) and gives
    inf/NaN parts for a zero divisor (accy gave NaN + NaN j for (1 + 1j) / 0)."""
    r = np.random.default_rng(0)
    a = (r.standard_normal(256) + 1j * r.standard_normal(256)).astype(cdt)
    b = (r.standard_normal(256) * 10.0 ** r.integers(-3, 3, 256) + 1j * r.standard_normal(256)
         ).astype(cdt)
    a[:3], b[:3] = [1 + 1j, 0j, np.inf], 0
    got = accy.jit(lambda x, y: x / y)(a, b)
    with np.errstate(all="ignore"):
        want = a / b
    np.testing.assert_array_equal(got.real, want.real)
    np.testing.assert_array_equal(got.imag, want.imag)


def test_make_complex_of_host_arrays_is_numpys():
    """Outside a trace it raised AttributeError ('ndarray' has no 'accy_dtype')."""
    z = anp.make_complex(np.ones(2, np.float32), np.array([0.0, 2.0], np.float32))
    assert z.dtype == np.complex64
    np.testing.assert_array_equal(z, [1 + 0j, 1 + 2j])


def test_refusals_name_the_capability_or_the_line():
    z = np.ones(3, np.complex128)
    from accy.plugins import backend_descriptors

    desc = backend_descriptors().get("vulkan")
    if desc is not None and desc.probe().available:
        with pytest.raises(CapabilityError, match="f64"):
            accy.jit(anp.exp, backend="vulkan")(z)
    with pytest.raises(UnsupportedError, match=r"complex array at test_complex.py:\d+"):
        accy.jit(lambda z: anp.sqrt(z))(z)

    def write(z):
        z[0] = 1.0
        return z

    with pytest.raises(UnsupportedError, match="build a new array"):
        accy.jit(write)(z)

    def augmented(z):
        z += 1  # numpy writes into the caller's array: refused, never silently rebound
        return z

    with pytest.raises(UnsupportedError, match="z = z op v"):
        accy.jit(augmented)(z)
