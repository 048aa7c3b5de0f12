"""Runtime behaviour on the CPU backend: disk cache across processes, bad input errors."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import accy
import numpy as np
import pytest
from accy.errors import CapabilityError, InputError

PROGRAM = textwrap.dedent("""\
    module {
      func @axpy(%arg0: f32[64], %arg1: f32[64]) -> (f32[64]) {
        %0 = tensor.constant {value = dense<[2.5]>} : () -> f32[]
        %1 = tensor.broadcast_to %0 {shape = [64]} : (f32[]) -> f32[64]
        %2 = arith.mul %1, %arg0 : (f32[64], f32[64]) -> f32[64]
        %3 = arith.add %2, %arg1 : (f32[64], f32[64]) -> f32[64]
        func.return %3 : (f32[64]) -> ()
      }
    }
""")

CHILD = textwrap.dedent("""\
    import json, sys
    import numpy as np
    import accy
    m = accy.parse_module(open(sys.argv[1]).read())
    exe = accy.compile(m, backend="cpu")
    x = np.arange(64, dtype=np.float32); y = np.ones(64, np.float32)
    out = exe(x, y)[0]
    assert np.allclose(out, 2.5 * x + y)
    print(json.dumps(exe.cache_stats))
""")


def _child(tmp_path: Path, cache_dir: Path) -> dict:
    prog = tmp_path / "axpy.accy"
    prog.write_text(PROGRAM)
    script = tmp_path / "child.py"
    script.write_text(CHILD)
    env = dict(os.environ, ACCY_CACHE_DIR=str(cache_dir))
    env.pop("ACCY_DISABLE_DISK_CACHE", None)
    out = subprocess.run([sys.executable, str(script), str(prog)], env=env, capture_output=True,
                         text=True, timeout=300, check=False)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_second_process_hits_disk_cache(tmp_path):
    cache = tmp_path / "cache"
    first = _child(tmp_path, cache)
    assert first.get("disk_misses", 0) >= 1
    second = _child(tmp_path, cache)
    assert second.get("disk_hits", 0) >= 1 and second.get("disk_misses", 0) == 0


def test_corrupt_cache_entry_is_rebuilt(tmp_path):
    cache = tmp_path / "cache"
    _child(tmp_path, cache)
    entries = [p for p in cache.rglob("*") if p.is_file()]
    assert entries
    for p in entries:
        p.write_bytes(p.read_bytes()[: max(1, p.stat().st_size // 2)])
    again = _child(tmp_path, cache)
    assert again.get("disk_misses", 0) >= 1


def _axpy():
    return accy.parse_module(PROGRAM)


def test_wrong_input_count():
    exe = accy.compile(_axpy())
    with pytest.raises(InputError, match="expected 2 inputs, got 1"):
        exe(np.zeros(64, np.float32))


def test_wrong_input_dtype():
    exe = accy.compile(_axpy())
    with pytest.raises(InputError, match=r"input #1: expected f32\[64\].*got float64"):
        exe(np.zeros(64, np.float32), np.zeros(64))


def test_wrong_input_shape():
    exe = accy.compile(_axpy())
    with pytest.raises(InputError, match=r"input #0: expected shape \[64\].*got \[63\]"):
        exe(np.zeros(63, np.float32), np.zeros(64, np.float32))


def test_unsupported_dtype_is_a_capability_error():
    from accy.backend import TargetProfile
    from accy.passes import PassContext, run_stages

    profile = TargetProfile(backend="tiny", dtypes=frozenset({"f32", "i32", "bool"}),
                            features=frozenset(), max_workgroup_size=256, subgroup_size=32,
                            shared_memory_bytes=16384)
    b = accy.Builder()
    t = b.tensor("f64", (8,))
    fb = b.begin_function("f", params=[t])
    fb.return_(fb.exp(fb.param(0)))
    fb.finish()
    with pytest.raises(CapabilityError, match="dtype f64 is not supported by backend 'tiny'"):
        run_stages(b.finish(), PassContext(target_profile=profile, backend="tiny"))


def test_unknown_backend_lists_known():
    from accy.errors import BackendUnavailable

    with pytest.raises(BackendUnavailable, match="cpu"):
        accy.compile(_axpy(), backend="nosuch")


def test_unwritable_cache_dir_warns_and_still_compiles(tmp_path, monkeypatch):
    from accy.runtime.compiler import clear_memory_cache

    not_a_dir = tmp_path / "cache"
    not_a_dir.write_text("a file where the cache directory should be")
    monkeypatch.setenv("ACCY_CACHE_DIR", str(not_a_dir))
    monkeypatch.delenv("ACCY_DISABLE_DISK_CACHE", raising=False)
    clear_memory_cache()
    with pytest.warns(RuntimeWarning, match="is not writable"):
        exe = accy.compile(_axpy(), backend="cpu")
    x = np.arange(64, dtype=np.float32)
    np.testing.assert_allclose(exe(x, x)[0], 3.5 * x)


def test_executable_still_correct_after_close():
    # accy.compile hands one cached Executable to every caller; close() must not lose constants
    b = accy.Builder()
    fb = b.begin_function("f", [b.tensor("f32", (4096,))])
    c = np.arange(4096, dtype=np.float32) + 7
    fb.return_(fb.add(fb.exp(fb.param(0)), fb.constant(b.tensor("f32", (4096,)), c)))
    fb.finish()
    exe = accy.compile(b.finish(), backend="cpu")
    x = np.zeros(4096, np.float32)
    exe.close()
    _scratch = [np.full(4096 * 4 + 64, 255, np.uint8) for _ in range(64)]
    np.testing.assert_allclose(exe(x)[0], c + 1)
    np.testing.assert_allclose(exe(x)[0], c + 1)


def test_input_too_large_for_32_bit_indexing_is_refused():
    # a small result does not make the 3e9-element input indexable with 32-bit offsets
    m = accy.parse_module(textwrap.dedent("""\
        module {
          func @f(%arg0: f32[3,1000000000]) -> (f32[3]) {
            %0 = reduce.sum %arg0 {axes = [1]} : (f32[3,1000000000]) -> f32[3]
            func.return %0 : (f32[3]) -> ()
          }
        }
    """))
    with pytest.raises(accy.errors.UnsupportedError, match=r"operand #0 f32\[3,1000000000\]"):
        accy.compile(m, backend="cpu")
