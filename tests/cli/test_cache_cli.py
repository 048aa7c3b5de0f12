"""``accy cache info|clear`` and ``accy run``'s inputs as data, through the real ``accy``
console script in a subprocess."""

from __future__ import annotations

import json
import os
import shutil
import struct
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

PROGRAM = """\
module {
  func @f(%arg0: f32[8], %arg1: f32[8]) -> (f32[8]) {
    %0 = arith.mul %arg0, %arg1 : (f32[8], f32[8]) -> f32[8]
    func.return %0 : (f32[8]) -> ()
  }
}
"""


def _accy() -> list[str]:
    script = Path(sys.executable).parent / "accy"
    if script.exists():
        return [str(script)]
    found = shutil.which("accy")
    if found is None:
        pytest.skip("the accy console script is not installed")
    return [found]


@pytest.fixture
def env(tmp_path):
    cache = tmp_path / "cache"
    environ = dict(os.environ, ACCY_CACHE_DIR=str(cache))
    environ.pop("ACCY_TUNING_CACHE", None)
    environ.pop("ACCY_DISABLE_DISK_CACHE", None)
    return environ


def accy(env, *args, check=True):
    out = subprocess.run([*_accy(), *args], env=env, capture_output=True, text=True,
                         timeout=300, check=False)
    if check:
        assert out.returncode == 0, out.stderr
    assert "Traceback" not in out.stderr, out.stderr
    return out


def _info(env) -> dict[str, dict]:
    doc = json.loads(accy(env, "cache", "info", "--json").stdout)
    assert doc["cache_dir"] == env["ACCY_CACHE_DIR"]
    return {c["name"]: c for c in doc["caches"]}


def _populate(env, tmp_path) -> Path:
    cache = Path(env["ACCY_CACHE_DIR"])
    program = tmp_path / "p.accy"
    program.write_text(PROGRAM)
    np.save(tmp_path / "x.npy", np.arange(8, dtype=np.float32))
    accy(env, "run", str(program), "-i", str(tmp_path / "x.npy"), "-i", str(tmp_path / "x.npy"))
    tuning = cache / "tuning" / "tuning.json"
    tuning.parent.mkdir(mode=0o700, exist_ok=True)
    tuning.write_text(json.dumps({"format": "accy-tuning-cache", "version": 1, "entries": {
        "d|k|s": {"device": "d", "kernel": "k", "shape_family": "s", "choice": "map-wg64-ipt1"}}}))
    blob = struct.pack("<IIII16s", 32, 1, 1, 2, b"u" * 16) + b"driver"
    (cache / "vulkan-pipelines").mkdir(mode=0o700, exist_ok=True)
    (cache / "vulkan-pipelines" / "dev.bin").write_bytes(blob)
    return cache


def test_info_reports_path_entries_and_bytes_of_each_cache(env, tmp_path):
    empty = _info(env)
    assert {n: (c["entries"], c["bytes"]) for n, c in empty.items()} == {
        "artifacts": (0, 0), "tuning": (0, 0), "pipelines": (0, 0), "programs": (0, 0)}
    cache = _populate(env, tmp_path)
    info = _info(env)
    artifacts = list((cache / "artifacts").glob("*.acart"))
    assert info["artifacts"]["entries"] == len(artifacts) >= 1
    linked = list((cache / "artifacts").glob("*.so"))  # the CPU's dlopen copies count too
    assert info["artifacts"]["bytes"] == sum(p.stat().st_size for p in artifacts + linked)
    assert info["artifacts"]["path"] == str(cache / "artifacts")
    assert info["tuning"]["entries"] == 1
    assert info["tuning"]["bytes"] == (cache / "tuning" / "tuning.json").stat().st_size
    assert (info["pipelines"]["entries"], info["pipelines"]["bytes"]) == (1, 38)
    text = accy(env, "cache", "info").stdout
    assert str(cache / "artifacts") in text and "cap 1.0 GiB" in text


def test_clear_one_cache_then_all(env, tmp_path):
    cache = _populate(env, tmp_path)
    keep = cache / "artifacts" / "notes.txt"
    keep.write_text("not a cache entry: clear leaves it alone")
    out = accy(env, "cache", "clear", "artifacts").stdout
    assert out.startswith("cleared artifacts: ")
    info = _info(env)
    assert info["artifacts"]["entries"] == 0
    assert info["tuning"]["entries"] == 1 and info["pipelines"]["entries"] == 1
    accy(env, "cache", "clear", "tuning", "pipelines")
    assert all(c["entries"] == 0 and c["bytes"] == 0 for c in _info(env).values())
    _populate(env, tmp_path)
    accy(env, "cache", "clear")
    assert all(c["entries"] == 0 for c in _info(env).values())
    assert keep.read_text().startswith("not a cache entry")


def test_clear_unknown_cache_is_an_error(env):
    res = accy(env, "cache", "clear", "artefacts", check=False)
    assert res.returncode == 2 and res.stderr.startswith("error: unknown cache 'artefacts'")
    assert "artifacts" in res.stderr


def test_info_says_when_a_cache_directory_is_refused(env, tmp_path):
    cache = _populate(env, tmp_path)
    os.chmod(cache / "artifacts", 0o777)
    info = _info(env)
    assert "writable by group or others" in info["artifacts"]["note"]


def test_max_bytes_is_reported(env):
    env["ACCY_CACHE_MAX_BYTES"] = "64M"
    doc = json.loads(accy(env, "cache", "info", "--json").stdout)
    assert doc["max_bytes"] == 64 << 20
    env["ACCY_CACHE_MAX_BYTES"] = "lots"
    res = accy(env, "cache", "info", check=False)
    assert res.returncode == 2 and "ACCY_CACHE_MAX_BYTES" in res.stderr


class _Bomb:
    """Unpickling this creates the marker file: proof that the input was unpickled."""

    def __init__(self, marker: str) -> None:
        self.marker = marker

    def __reduce__(self):
        return (open, (self.marker, "w"))


def test_run_never_unpickles_an_input(env, tmp_path):
    program = tmp_path / "p.accy"
    program.write_text(PROGRAM)
    marker = tmp_path / "unpickled"
    bad = tmp_path / "objects.npy"
    np.save(bad, np.array([_Bomb(str(marker)), 1], dtype=object), allow_pickle=True)
    np.save(tmp_path / "x.npy", np.arange(8, dtype=np.float32))
    res = accy(env, "run", str(program), "-i", str(bad), "-i", str(tmp_path / "x.npy"),
               check=False)
    assert res.returncode == 2 and res.stderr.startswith("error: ")
    assert str(bad) in res.stderr and not marker.exists()
