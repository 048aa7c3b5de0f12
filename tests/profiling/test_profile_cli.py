"""``accy profile --suite quick`` on every available backend: every record validates against
the schema, results match numpy, and ``accy profile report`` writes non-trivial PNGs."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import jsonschema
import pytest
from accy.cli.main import main
from accy.profiling import PHASES, read_records
from accy.profiling.suites import SUITES

SCHEMA = json.loads((Path(__file__).resolve().parents[2] / "docs" /
                     "profiling.schema.json").read_text())


@pytest.fixture(autouse=True)
def _private_tuning_cache(monkeypatch, tmp_path):
    monkeypatch.setenv("ACCY_TUNING_CACHE", str(tmp_path / "tuning.json"))


def test_quick_suite_records_validate_and_report_plots(backend, tmp_path, capsys):
    run = tmp_path / "run.jsonl"
    rc = main(["profile", "--suite", "quick", "--backend", backend, "--samples", "2",
               "--warmup", "0", "--no-progress", "-o", str(run)])
    records = read_records(run)
    validator = jsonschema.Draft202012Validator(SCHEMA)
    for r in records:
        validator.validate(r)
    assert rc == 0, [r for r in records if r["event"] in ("error", "check")]
    assert records[0]["event"] == "start" and records[-1]["event"] == "end"
    assert records[-1]["ok"] and records[-1]["records"] == len(records)
    checks = [r for r in records if r["event"] == "check"]
    assert [(r["workload"], r["elements"], r["chain"]) for r in checks] == SUITES["quick"]
    assert all(r["ok"] for r in checks)
    phases = {(r["workload"], r["sample"], r["phase"]) for r in records if r["event"] == "phase"}
    assert len(phases) == len(SUITES["quick"]) * 2 * len(PHASES)
    assert any(r["event"] == "pass" and r["pass"] == "fusion" for r in records)
    assert any(r["event"] == "summary" and r["metric"] == "pass" for r in records)
    if importlib.util.find_spec("matplotlib") is None:
        pytest.skip("matplotlib (the accy-core[plots] extra) is not installed: no plots to check")
    assert main(["profile", "report", str(run), "--plots", str(tmp_path / "plots")]) == 0
    assert "transformer_block" in capsys.readouterr().out
    png = tmp_path / "plots" / "phases.png"
    assert png.read_bytes()[:4] == b"\x89PNG" and png.stat().st_size > 10_000


def test_one_case_with_the_workload_options(tmp_path):
    run = tmp_path / "one.jsonl"
    assert main(["profile", "--workload", "mlp_two_layer", "--elements", "8", "--chain", "4",
                 "--samples", "1", "--warmup", "0", "--no-progress", "-o", str(run)]) == 0
    records = read_records(run)
    assert records[0]["cases"] == [["mlp_two_layer", 8, 4]] and records[0]["suite"] is None


def test_workload_without_sizes_is_a_usage_error(capsys):
    assert main(["profile", "--workload", "mlp_two_layer", "--no-progress"]) == 2
    assert "needs --elements" in capsys.readouterr().err
