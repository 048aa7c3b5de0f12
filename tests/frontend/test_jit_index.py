"""The jit index (accy.frontend.jit_index, docs/caches.md "A known function's first call"):
a known function's first call with a known signature in a new process loads its executable
without tracing, and anything the trace reads that changed (source, a global, a closure
cell, the signature) is a miss, never a stale hit; a corrupt entry is rebuilt."""

from __future__ import annotations

import functools
import json
import os
import subprocess
import sys
import textwrap
import warnings

import accy
import accy.numpy as anp
import numpy as np
from accy.errors import CacheWarning
from accy.frontend import jit_index
from accy.frontend.fn_key import function_key, value_key

_USER = """
import os
import accy.numpy as np

SCALE = float(os.environ.get("SCALE", "2"))

def _make(c):
    def f(x):
        return np.sqrt(x * SCALE + c) {op} 1.0
    return f

f = _make(float(os.environ.get("C", "1")))
"""

_RUN = textwrap.dedent("""
    import json, sys
    import numpy
    import accy
    sys.path.insert(0, sys.argv[1])
    import user
    f = accy.jit(user.f)
    x = numpy.linspace(0, 1, int(sys.argv[2]), dtype=numpy.float32)
    out = f(x)
    print(json.dumps({"traces": f.trace_count, "hits": f.index_hits,
                      "out": [float(v) for v in out[:3]]}))
""")


def _env(tmp_path, **extra: str) -> dict:
    env = dict(os.environ, ACCY_CACHE_DIR=str(tmp_path / "cache"), PYTHONDONTWRITEBYTECODE="1",
               **extra)
    env.pop("ACCY_DISABLE_DISK_CACHE", None)
    return env


def _call(tmp_path, n: int = 8, **extra: str) -> dict:
    done = subprocess.run([sys.executable, "-c", _RUN, str(tmp_path / "src"), str(n)],
                          env=_env(tmp_path, **extra), capture_output=True, text=True,
                          check=False, timeout=300)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def _expect(n: int = 8, scale: float = 2.0, c: float = 1.0, sign: float = 1.0) -> list:
    x = np.linspace(0, 1, n, dtype=np.float32)
    return (np.sqrt(x * np.float32(scale) + np.float32(c)) + np.float32(sign)).tolist()[:3]


def _write_user(tmp_path, op: str = "+") -> None:
    (tmp_path / "src").mkdir(exist_ok=True)
    (tmp_path / "src" / "user.py").write_text(_USER.format(op=op))


def test_index_hits_in_a_new_process_and_misses_on_every_change(tmp_path):
    _write_user(tmp_path)
    first = _call(tmp_path)
    assert (first["traces"], first["hits"]) == (1, 0)
    warm = _call(tmp_path)
    assert (warm["traces"], warm["hits"]) == (0, 1)  # nothing traced
    np.testing.assert_allclose(warm["out"], _expect(), rtol=1e-6)
    for extra, want in (({"SCALE": "3"}, _expect(scale=3.0)),  # a global's value
                        ({"C": "5"}, _expect(c=5.0))):  # a closure cell's
        changed = _call(tmp_path, **extra)
        assert (changed["traces"], changed["hits"]) == (1, 0), extra
        np.testing.assert_allclose(changed["out"], want, rtol=1e-6)
    sig = _call(tmp_path, n=16)  # another signature
    assert (sig["traces"], sig["hits"]) == (1, 0)
    np.testing.assert_allclose(sig["out"], _expect(16), rtol=1e-6)
    _write_user(tmp_path, op="-")  # the source
    edited = _call(tmp_path)
    assert (edited["traces"], edited["hits"]) == (1, 0)
    np.testing.assert_allclose(edited["out"], _expect(sign=-1.0), rtol=1e-6)
    again = _call(tmp_path)
    assert (again["traces"], again["hits"]) == (0, 1)
    np.testing.assert_allclose(again["out"], _expect(sign=-1.0), rtol=1e-6)


def test_a_corrupt_index_file_is_rebuilt(tmp_path):
    _write_user(tmp_path)
    _call(tmp_path)
    entries = [p for p in (tmp_path / "cache" / "artifacts").glob("*.acart")
               if jit_index.FORMAT.encode() in p.read_bytes()]
    assert len(entries) == 1
    blob = bytearray(entries[0].read_bytes())
    blob[len(blob) // 2] ^= 0xFF
    entries[0].write_bytes(bytes(blob))
    rebuilt = _call(tmp_path)
    assert (rebuilt["traces"], rebuilt["hits"]) == (1, 0)
    np.testing.assert_allclose(rebuilt["out"], _expect(), rtol=1e-6)
    assert _call(tmp_path)["hits"] == 1


def test_an_entry_of_the_wrong_fields_is_discarded(tmp_path, monkeypatch):
    from accy.backend import Artifact
    from accy.runtime.artifact_cache import ArtifactCache

    monkeypatch.setenv("ACCY_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("ACCY_DISABLE_DISK_CACHE", raising=False)
    cache = ArtifactCache()
    for data in (b"not a pickle", b"\x80\x05N."):  # garbage; a pickle of None
        cache.store("k", Artifact("jit", "f", jit_index.FORMAT, data, "", {}))
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            assert jit_index.load("k") is None
        assert any(issubclass(w.category, CacheWarning) for w in seen)
        assert not os.path.exists(cache._file_for("k"))
    jit_index.store("k", jit_index.Known("m" * 64, "f", ("*",), (0,)))
    got = jit_index.load("k")
    assert (got.module, got.function, got.out_tree, got.writes) == ("m" * 64, "f", ("*",), (0,))


# the key itself, in process --------------------------------------------------------------
G = 2.0
ARR = np.arange(4, dtype=np.float32)
OPTS = {"a": 1, "b": 2}


def _uses_global(x):
    return x * G


def _helper(x):
    return anp.sqrt(x) * G


def _uses_helper(x):
    return _helper(x) + 1.0


def _uses_array_and_dict(x):
    return x + ARR[0] + sum(OPTS.values())


def test_function_key_follows_globals_helpers_arrays_and_dict_order(monkeypatch):
    k = function_key(_uses_global)
    assert k is not None and function_key(_uses_global) == k
    monkeypatch.setattr(sys.modules[__name__], "G", 3.0)
    assert function_key(_uses_global) != k
    kh = function_key(_uses_helper)
    monkeypatch.setattr(sys.modules[__name__], "G", 4.0)  # read by the helper it calls
    assert function_key(_uses_helper) != kh
    ka = function_key(_uses_array_and_dict)
    monkeypatch.setattr(sys.modules[__name__], "ARR", np.arange(1, 5, dtype=np.float32))
    kb = function_key(_uses_array_and_dict)
    monkeypatch.setattr(sys.modules[__name__], "OPTS", {"b": 2, "a": 1})  # another order
    assert len({ka, kb, function_key(_uses_array_and_dict)}) == 3
    kn = function_key(_helper)
    monkeypatch.setattr(anp, "sqrt", lambda x: x)  # accy.numpy.sqrt replaced: seen
    assert function_key(_helper) != kn


class _Obj:
    scale = 2.0


_OBJ = _Obj()


def test_function_key_refuses_what_it_cannot_key():
    def imports(x):
        import math

        return x * math.pi

    def reads_object(x):
        return x * _OBJ.scale

    def writes_global(x):
        global G
        G = 1.0
        return x

    def by_name(x):
        return getattr(anp, "sqrt")(x)  # noqa: B009 - the refused form itself

    def seeded_per_process(x):
        return x + np.random.random()

    big = np.zeros(1 << 19)  # 4 MiB: not cheap to hash

    def big_closure(x):
        return x + big[0]

    for fn in (imports, reads_object, writes_global, big_closure, by_name, seeded_per_process,
               print):
        assert function_key(fn) is None, fn
    assert value_key((("=", "object", object()),)) is None
    assert value_key((("tuple", (("*",), ("=", "int", 3))),)) is not None


def test_lower_after_an_index_hit_traces_then(tmp_path, monkeypatch):
    monkeypatch.setenv("ACCY_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("ACCY_DISABLE_DISK_CACHE", raising=False)
    x = np.linspace(0, 1, 8, dtype=np.float32)
    f = accy.jit(_uses_helper)
    ref = f(x)
    accy.runtime.clear_memory_cache()
    g = accy.jit(_uses_helper)  # a new jitted function: as in a new process
    np.testing.assert_allclose(g(x), ref, rtol=1e-6)
    assert (g.trace_count, g.index_hits) == (0, 1)
    assert g.compile(x).cache_stats.get("pipeline_hits") == 1
    assert g.lower(x).fingerprint() == f.lower(x).fingerprint() and g.trace_count == 1


def _reads_own_attribute(x):
    return x * _reads_own_attribute.scale


_reads_own_attribute.scale = 2.0
_EV = eval  # a refused builtin under another name
_U = np.frompyfunc(lambda v: v + G, 1, 1)  # a ufunc named after its Python function


def _tanh_of_default(x, m=anp):
    return m.tanh(x)


@functools.wraps(anp.tanh)  # a user's function that claims accy's __module__
def _my_tanh(x):
    return anp.tanh(x) * G


def _uses_my_tanh(x):
    return _my_tanh(x)


class _Forged:
    scale = 2.0


_Forged.__module__, _Forged.__qualname__ = "numpy", "float32"


def test_function_key_sees_attributes_defaults_and_dtype_fields(monkeypatch):
    """Wrong hits found by trying (each was a stale hit in a second process)."""
    k = function_key(_reads_own_attribute)
    monkeypatch.setattr(_reads_own_attribute, "scale", 3.0)  # a function attribute
    assert k is not None and function_key(_reads_own_attribute) != k
    kw = function_key(_uses_my_tanh)
    monkeypatch.setattr(sys.modules[__name__], "G", 5.0)  # read by the wrapped function
    assert kw is not None and function_key(_uses_my_tanh) != kw
    kd = function_key(_tanh_of_default)
    monkeypatch.setattr(anp, "tanh", anp.sin)  # an attribute of a module default
    assert kd is not None and function_key(_tanh_of_default) != kd

    def struct(dt):
        r = np.array([(1.0, 2.0)], dtype=dt)
        return function_key(lambda x: x * r["a"][0])

    ka, kb = struct([("a", "<f4"), ("b", "<f4")]), struct([("b", "<f4"), ("a", "<f4")])
    assert None not in (ka, kb) and ka != kb  # same bytes, other fields
    masked = np.ma.array([1.0, 2.0], mask=[False, True])  # a subclass: its mask unkeyed

    def by_eval(x):
        return x * _EV("G")

    def loads(x):
        return x * np.load("w.npy")

    c, f = np.ones((2, 2), np.float32), np.ones((2, 2), np.float32, order="F")
    assert function_key(lambda x: x * c.strides[1]) != function_key(lambda x: x * f.strides[1])

    class Missing(dict):
        def __missing__(self, k):
            return 2.0

    g = Missing(__builtins__=__builtins__)
    exec("def scaled(x):\n    return x * SCALE\n", g)  # SCALE from __missing__
    many = [np.zeros(1 << 17)] * 17  # 17 arrays of 1 MiB: over MAX_TOTAL_BYTES
    for fn in (by_eval, loads, lambda x: x * float(_U(1.0)), lambda x: x * masked.filled(0),
               lambda x: x * np.datetime64("now").astype(np.int64), g["scaled"],
               lambda x: anp.__dict__["tanh"](x), lambda x: x + many[0][0],
               lambda x: x * _Forged.scale):
        assert function_key(fn) is None, fn
    assert function_key(lambda x: np.add(x, np.float32(1))) is not None  # numpy's own ufunc
    assert function_key(lambda x: np.mean(x)) is not None  # a dispatcher, by name


def test_signatures_equal_in_python_but_not_to_a_trace_are_not_one_entry():
    """1 == 1.0 == True and 0.0 == -0.0 in Python (inside a static tuple or a dict key
    too); the traces differ (a result's dtype, the sign of a zero)."""
    x = np.ones(4, np.float32)
    f = accy.jit(lambda x, s: x * s, backend="reference")
    f(x, 0.0)
    assert np.signbit(f(x, -0.0)).all() and f.trace_count == 2
    g = accy.jit(lambda x, t: anp.full((2,), t[0]), backend="reference", static_argnums=1)
    assert g(x, (1, 2)).dtype.kind == "i" and g(x, (1.0, 2.0)).dtype.kind == "f"
    h = accy.jit(lambda d: [v * k for k, v in d.items()][0], backend="reference")
    xi = np.ones(4, np.int32)
    assert h({1: xi}).dtype.kind == "i" and h({1.0: xi}).dtype.kind == "f"
    s = np.zeros(1, [("a", "<f4"), ("b", "<i4")])
    k = accy.jit(lambda x, r: x + r["b"][0], backend="reference", static_argnums=1)
    k(x, s)
    k(x, s.astype([("b", "<f4"), ("a", "<i4")]))  # same bytes, other fields
    assert k.trace_count == 2


_BIG = 10**5000  # repr() of it raises ValueError (int_max_str_digits)


def _uses_big_int(x):
    return x * float(_BIG % 7)


def test_a_huge_int_is_keyed_not_a_crash(monkeypatch):
    k = function_key(_uses_big_int)
    monkeypatch.setattr(sys.modules[__name__], "_BIG", 10**5000 + 1)
    assert k is not None and function_key(_uses_big_int) != k
    assert value_key((("=", "int", 10**5000),)) is not None
    assert function_key(lambda: "a" * 2000 + "b" * 2000) is not None  # long constants


_NAN = float("nan")


def _uses_nan(x):
    return x + _NAN


def test_a_float_is_keyed_by_its_bits(monkeypatch):
    """``repr`` prints every NaN as ``nan``: -nan (``copysign`` sees it), another payload and
    -0.0 are other values, in a global and in a complex."""
    k = function_key(_uses_nan)
    monkeypatch.setattr(sys.modules[__name__], "_NAN", -float("nan"))
    assert function_key(_uses_nan) != k
    assert value_key((("=", "float", 0.0),)) != value_key((("=", "float", -0.0),))
    assert value_key((("=", "complex", complex(_NAN, 1)),)) != value_key(
        (("=", "complex", complex(-_NAN, 1)),))


def test_factory_functions_of_accy_are_keyed_with_their_defaults():
    """A function made by a factory in accy's files is keyed by name, so what the factory
    gave it at run time (closure cells, defaults) must be in the key."""
    g = {"__name__": "accy.numpy"}
    exec(compile("def make(c):\n    def f(x, c=c):\n        return x * c\n    return f\n",
                 anp.__file__, "exec"), g)

    def key_of(fn):
        def uses(x):
            return fn(x)
        return function_key(uses)

    assert key_of(g["make"](1.0)) == key_of(g["make"](1.0))
    assert key_of(g["make"](1.0)) != key_of(g["make"](2.0))
