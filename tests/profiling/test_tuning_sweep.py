"""A real sweep writes the tuning cache; a new process compiles with the cached choices
(visible in its profile records); ``accy tune`` export → import round-trips."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from accy.cli.main import main
from accy.profiling.workloads import build
from accy.tuning.cache import TuningCache
from accy.tuning.sweep import sweep_program


@pytest.fixture(autouse=True)
def _private_tuning_cache(monkeypatch, tmp_path):
    monkeypatch.setenv("ACCY_TUNING_CACHE", str(tmp_path / "tuning.json"))


def test_sweep_writes_cache_and_a_new_process_uses_it(backend, tmp_path):
    wl = build("attention_softmax", 32, 64)
    results = sweep_program(wl.module, backend, warmup=0, samples=2)
    assert results and all(r.best is not None for r in results)
    entries = TuningCache().load(strict=True)
    assert len(entries) == sum(r.cached for r in results) > 0
    for r in results:
        assert r.best.median_ns == min(m.median_ns for m in r.measurements)
    best = {r.kernel: r.best.label for r in results if r.cached}
    run = tmp_path / "after.jsonl"
    cmd = [sys.executable, "-m", "accy", "profile", "--workload", "attention_softmax",
           "--elements", "32", "--chain", "64", "--backend", backend, "--samples", "1",
           "--warmup", "0", "--no-progress", "-o", str(run)]
    subprocess.run(cmd, check=True, env=dict(os.environ), capture_output=True, timeout=300)
    records = [json.loads(line) for line in run.read_text().splitlines()]
    (compiled,) = [r for r in records if r["event"] == "compile"]
    for kernel, label in best.items():
        choice = compiled["launch_choices"][kernel]
        assert choice["candidate"] == label
        is_default = label == results[[r.kernel for r in results].index(kernel)] \
            .measurements[0].label
        assert choice["source"] == ("default" if is_default else "cache")
    assert (next(r for r in records if r["event"] == "check"))["ok"]


def test_explicit_choice_overrides_the_cache(tmp_path):
    import accy

    wl = build("elementwise_chain", 1024, 2)
    sweep_program(wl.module, "cpu", warmup=0, samples=1)
    exe = accy.compile(wl.module, "cpu", launch={"elementwise_chain_k0_map": "map-wg64-ipt4"})
    region = next(op for op in exe.module.functions[0].body.ops if op.name == "dispatch.region")
    assert region.attrs["candidate"] == "map-wg64-ipt4"
    assert region.attrs["candidate_source"] == "explicit"


def test_tune_cli_program_export_import(tmp_path, capsys):
    program = tmp_path / "p.accy"
    program.write_text(build("reduction_row_norm", 8, 16).module.to_text())
    assert main(["tune", str(program), "--backend", "cpu", "--samples", "1", "--warmup", "0",
                 "--no-progress"]) == 0
    assert "tuning cache:" in capsys.readouterr().out
    archive = tmp_path / "t.accytune"
    assert main(["tune", "--export", str(archive)]) == 0
    before = TuningCache().load()
    other = tmp_path / "other.json"
    assert main(["tune", "--cache", str(other), "--import", str(archive)]) == 0
    assert TuningCache(other).load() == before
    archive.write_bytes(archive.read_bytes()[:-3])
    assert main(["tune", "--cache", str(other), "--import", str(archive)]) == 2
    assert "truncated" in capsys.readouterr().err
    assert TuningCache(other).load() == before


def test_tune_families_prints_a_table_and_writes_records(capsys, tmp_path):
    records = tmp_path / "families.jsonl"
    assert main(["tune", "--families", "--backend", "cpu", "--samples", "1", "--warmup", "0",
                 "--family", "scan", "--size", "4096", "--no-defaults", "--records",
                 str(records), "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "speed-up" in out and "scan" in out and "i64 n=4096" in out
    rows = [json.loads(line) for line in records.read_text().splitlines()]
    best = [r for r in rows if r["event"] == "best"]
    assert len(best) == 4 and all(r["family"] == "scan" and r["artifact"] for r in best)
    assert {r["event"] for r in rows} <= {"candidate", "rejected", "best"}
