"""`accy run`, `accy ir`, `accy compile` on a text-form program."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

PROGRAM = """\
module {
  func @scale_add(%arg0: f32[8], %arg1: f32[8]) -> (f32[8]) {
    %0 = arith.mul %arg0, %arg1 : (f32[8], f32[8]) -> f32[8]
    %1 = arith.add %0, %arg0 : (f32[8], f32[8]) -> f32[8]
    func.return %1 : (f32[8]) -> ()
  }
}
"""


def accy_cli(*args, check=True):
    out = subprocess.run([sys.executable, "-m", "accy", *args], capture_output=True, text=True,
                         timeout=300, check=False)
    if check:
        assert out.returncode == 0, out.stderr
    return out


@pytest.fixture
def program(tmp_path):
    p = tmp_path / "prog.accy"
    p.write_text(PROGRAM)
    x = np.arange(8, dtype=np.float32)
    np.save(tmp_path / "x.npy", x)
    np.save(tmp_path / "y.npy", x + 1)
    return p


def test_run_writes_npz(program, tmp_path):
    out = tmp_path / "out.npz"
    accy_cli("run", str(program), "--input", str(tmp_path / "x.npy"), "--input",
             str(tmp_path / "y.npy"), "--out", str(out))
    x = np.arange(8, dtype=np.float32)
    np.testing.assert_allclose(np.load(out)["out0"], x * (x + 1) + x)


def test_run_wrong_input_count_is_a_clear_error(program, tmp_path):
    res = accy_cli("run", str(program), "--input", str(tmp_path / "x.npy"), check=False)
    assert res.returncode == 2
    assert "expected 2 inputs, got 1" in res.stderr
    assert "Traceback" not in res.stderr


def test_ir_kernel_stage_prints_kernels(program):
    res = accy_cli("ir", str(program), "--stage", "kernel")
    assert "dispatch.region" in res.stdout and "kernel scale_add_k0_map" in res.stdout


def test_ir_syntax_error_has_line_and_column(tmp_path):
    bad = tmp_path / "bad.accy"
    bad.write_text(PROGRAM.replace("arith.mul %arg0, %arg1", "arith.mul %arg0 %arg1"))
    res = accy_cli("ir", str(bad), check=False)
    assert res.returncode == 2
    assert "3:" in res.stderr and "Traceback" not in res.stderr


@pytest.mark.parametrize(("fmt", "ext"), [("llvm", "ll"), ("asm", "s"), ("obj", "o")])
def test_compile_writes_one_file_per_kernel(program, tmp_path, fmt, ext):
    out = tmp_path / fmt
    accy_cli("compile", str(program), "--backend", "cpu", "--emit", fmt, "-o", str(out))
    files = list(out.glob(f"*.{ext}"))
    assert len(files) == 1 and files[0].stat().st_size > 0


def _main(capsys, *args):
    from accy.cli.main import main

    code = main(list(args))
    return code, capsys.readouterr()


def test_run_out_in_missing_directory_is_an_error_line(program, tmp_path, capsys):
    code, res = _main(capsys, "run", str(program), "-i", str(tmp_path / "x.npy"),
                      "-i", str(tmp_path / "y.npy"), "-o", str(tmp_path / "no" / "out.npz"))
    assert code == 2 and "cannot write outputs to" in res.err


def test_run_out_is_written_at_exactly_that_path(program, tmp_path, capsys):
    out = tmp_path / "result.bin"  # numpy.savez(path) would write result.bin.npz
    code, _ = _main(capsys, "run", str(program), "-i", str(tmp_path / "x.npy"),
                    "-i", str(tmp_path / "y.npy"), "-o", str(out))
    assert code == 0 and out.is_file() and not (tmp_path / "result.bin.npz").exists()


def test_run_program_that_is_a_directory(tmp_path, capsys):
    code, res = _main(capsys, "run", str(tmp_path))
    assert code == 2 and "is not a file" in res.err


def test_compile_target_on_a_backend_without_targets(program, tmp_path, capsys):
    code, res = _main(capsys, "compile", str(program), "-b", "cpu", "--target", "sm_90",
                      "-o", str(tmp_path / "out"))
    assert code == 2 and "takes no --target" in res.err


def test_compile_output_that_is_a_file_is_an_error_line(program, tmp_path, capsys):
    (tmp_path / "taken").write_text("")
    code, res = _main(capsys, "compile", str(program), "-b", "cpu", "-o", str(tmp_path / "taken"))
    assert code == 2 and "cannot create the output directory" in res.err


def test_compile_of_an_empty_module_is_an_error_line(tmp_path, capsys):
    """It wrote nothing and exited 0, where accy run says the module has no functions."""
    (tmp_path / "empty.accy").write_text("")
    code, res = _main(capsys, "compile", str(tmp_path / "empty.accy"), "-o", str(tmp_path / "o"))
    assert code == 2 and "no functions to compile" in res.err
