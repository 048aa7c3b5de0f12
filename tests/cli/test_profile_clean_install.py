"""`accy profile` / `accy profile report` as on a clean `pip install accy-core accy-backend-cpu`.

The real ``accy`` entry point runs in a subprocess whose path hides tqdm and matplotlib (a
stub that raises ``ModuleNotFoundError``, as a missing package does): the progress bar is
rich's, the report prints its table and one line saying the plots were skipped, and a run
that fails leaves no output file behind (issue 13 point 1).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from accy.cli.main import main
from accy.profiling import read_records

_HIDE = "raise ModuleNotFoundError(\"No module named '{0}'\", name='{0}')\n"


def accy_cli(*args: str, env: dict[str, str] | None = None, cwd: Path | None = None):
    """Run the installed ``accy`` console script (the real entry point) and return the result."""
    script = Path(sys.executable).with_name("accy")
    cmd = [str(script)] if script.exists() else [sys.executable, "-m", "accy"]
    return subprocess.run([*cmd, *args], capture_output=True, text=True, timeout=300,
                          check=False, env=env, cwd=cwd)


@pytest.fixture
def clean_env(tmp_path) -> dict[str, str]:
    """Environment whose PYTHONPATH makes ``import tqdm`` and ``import matplotlib`` fail."""
    hidden = tmp_path / "hidden"
    for name in ("tqdm", "matplotlib"):
        (hidden / name).mkdir(parents=True)
        (hidden / name / "__init__.py").write_text(_HIDE.format(name))
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(hidden), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    env["ACCY_TUNING_CACHE"] = str(tmp_path / "tuning.json")
    return env


def test_profile_and_report_without_tqdm_or_matplotlib(clean_env, tmp_path):
    run = tmp_path / "run.jsonl"
    res = accy_cli("profile", "--workload", "mlp_two_layer", "--elements", "8", "--chain", "4",
                   "--samples", "1", "--warmup", "0", "-o", str(run), env=clean_env)
    assert res.returncode == 0, res.stderr
    assert "Traceback" not in res.stderr and "tqdm" not in res.stderr
    assert "profile (1 cases)" in res.stderr  # rich's bar, on stderr
    assert read_records(run)[-1]["event"] == "end"

    plots = tmp_path / "plots"
    res = accy_cli("profile", "report", str(run), "--plots", str(plots), env=clean_env)
    assert res.returncode == 0, res.stderr
    assert "mlp_two_layer" in res.stdout
    assert res.stderr.strip().splitlines() == [
        "plots skipped: matplotlib is not installed (it is the accy-core[plots] extra: "
        "pip install matplotlib); --no-plots silences this"]
    assert not plots.exists()

    res = accy_cli("profile", "report", str(run), "--no-plots", env=clean_env)
    assert res.returncode == 0 and res.stderr == "" and "mlp_two_layer" in res.stdout


def test_progress_goes_to_stderr_so_stdout_stays_json(clean_env):
    res = accy_cli("profile", "--workload", "mlp_two_layer", "--elements", "8", "--chain", "4",
                   "--samples", "1", "--warmup", "0", "-o", "-", env=clean_env)
    assert res.returncode == 0, res.stderr
    assert all(line.startswith("{") for line in res.stdout.splitlines())
    assert "profile (1 cases)" in res.stderr


def test_failed_profile_leaves_no_output_file(tmp_path):
    out = tmp_path / "out" / "run.jsonl"
    res = accy_cli("profile", "--backend", "no-such-backend", "--no-progress", "-o", str(out))
    assert res.returncode == 2 and res.stderr.startswith("error: ")
    assert not out.exists() and not list(out.parent.glob("*"))


def test_crash_mid_run_leaves_no_output_file(tmp_path, monkeypatch):
    from accy.profiling import runner

    def crash(*args, **kwargs):
        raise RuntimeError("simulated crash in the middle of a run")

    monkeypatch.setattr(runner, "run_case", crash)
    out = tmp_path / "run.jsonl"
    with pytest.raises(RuntimeError, match="simulated crash"):
        main(["profile", "--workload", "mlp_two_layer", "--elements", "8", "--chain", "4",
              "--no-progress", "-o", str(out)])
    assert list(tmp_path.iterdir()) == []
