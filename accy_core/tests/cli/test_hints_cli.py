"""The ``accy`` entry point's hints, run as a user runs it: the console script, in a subprocess.

Covers: a non-.npy input is an accy error (not numpy's allow_pickle advice), "did you mean"
for an unknown op and an unknown backend, a closed stdout pipe (``| head``) ends quietly,
``--help`` shows no reST markup, ``profile``'s usage does not make ``report`` look
required, and ``accy kernels`` with no family installed says so.
"""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
from pathlib import Path

import numpy as np
import pytest
from accy.cli.main import COMMANDS as ALL_COMMANDS

PROGRAM = """\
func @double(%x: f32[4]) -> (f32[4]) {
  %0 = arith.add %x, %x : (f32[4], f32[4]) -> f32[4]
  func.return %0 : (f32[4]) -> ()
}
"""


def _accy_script() -> str:
    script = Path(sysconfig.get_path("scripts")) / "accy"
    if not script.exists():  # pragma: no cover - accy-core always installs it
        pytest.skip(f"the accy console script is not installed at {script}")
    return str(script)


def accy(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([_accy_script(), *args], capture_output=True, text=True, timeout=300,
                          check=False, env={**os.environ, **(env or {})})


@pytest.fixture
def program(tmp_path: Path) -> Path:
    p = tmp_path / "double.accy"
    p.write_text(PROGRAM)
    return p


@pytest.mark.parametrize("name, content", [
    ("x.csv", b"1,2,3,4\n"),
    ("x.npz", None),
    ("objects.npy", None),
])
def test_non_npy_input_is_an_accy_error(program, tmp_path, name, content):
    path = tmp_path / name
    if name.endswith(".npz"):
        np.savez(path, a=np.ones(4, np.float32))
    elif name.startswith("objects"):
        np.save(path, np.array([1, "a", None, 2.0], dtype=object), allow_pickle=True)
    else:
        path.write_bytes(content)
    out = accy("run", str(program), "--input", str(path))
    assert out.returncode == 2
    assert out.stderr.startswith("error: input ") and "numpy.save(" in out.stderr
    assert "allow_pickle" not in out.stderr and "Traceback" not in out.stderr
    assert len(out.stderr.splitlines()) == 1


def test_npy_input_still_runs(program, tmp_path):
    np.save(tmp_path / "x.npy", np.arange(4, dtype=np.float32))
    out = accy("run", str(program), "--input", str(tmp_path / "x.npy"))
    assert out.returncode == 0, out.stderr
    assert "[0. 2. 4. 6.]" in out.stdout


def test_unknown_op_suggests_the_close_name(tmp_path):
    p = tmp_path / "typo.accy"
    p.write_text(PROGRAM.replace("arith.add", "arith.ad"))
    out = accy("ir", str(p))
    assert out.returncode == 2
    assert "unknown op 'arith.ad'; did you mean 'arith.add'" in out.stderr
    assert f"{p}:2:" in out.stderr  # the file and line of the op


def test_unknown_backend_suggests_the_close_name(program):
    out = accy("run", str(program), "--backend", "vulcan")
    assert out.returncode == 2
    assert "unknown backend 'vulcan'; did you mean 'vulkan'?" in out.stderr


@pytest.mark.parametrize("args", [["--help"], ["kernels"], ["ir", "PROGRAM"]])
def test_closed_pipe_ends_quietly(program, args):
    # the reader is gone before the first write, as when `| head` has already exited
    args = [str(program) if a == "PROGRAM" else a for a in args]
    proc = subprocess.Popen([_accy_script(), *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    assert proc.stdout is not None
    proc.stdout.close()
    _, stderr = proc.communicate(timeout=300)
    assert "Traceback" not in stderr.decode() and "BrokenPipe" not in stderr.decode(), stderr
    # argparse swallows write errors of --help itself (status 0); commands end with 141
    assert proc.returncode == (0 if args == ["--help"] else 141)


COMMANDS = list(ALL_COMMANDS)  # every command, including ones added later


@pytest.mark.parametrize("command", [None, *COMMANDS])
def test_help_shows_no_rest_markup(command):
    out = accy(*([command] if command else []), "--help")
    assert out.returncode == 0, out.stderr
    for markup in ("``", ":class:", ":func:", "::\n"):
        assert markup not in out.stdout, f"{command} --help shows {markup!r}:\n{out.stdout}"


def test_profile_usage_shows_report_as_optional():
    out = accy("profile", "--help")
    usage = out.stdout.split("\n\n", 1)[0]
    assert "accy profile report RUN.jsonl" in usage
    first = usage.splitlines()[0]
    assert "report" not in first, first  # the plain form needs no subcommand


def test_kernels_without_families_says_so():
    out = accy("kernels", env={"ACCY_DISABLE_PLUGIN_AUTOLOAD": "1"})
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("no kernel families installed")
    assert "pip install ./accy_kernels" in out.stdout and "not on PyPI" in out.stdout


def test_python_dash_m_is_the_same_entry_point(program):
    out = subprocess.run([sys.executable, "-m", "accy", "run", str(program), "--backend", "cpux"],
                         capture_output=True, text=True, timeout=300, check=False)
    assert out.returncode == 2 and "did you mean 'cpu'?" in out.stderr
