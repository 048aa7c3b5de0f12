"""Suites hold exactly the issue's cases; summaries; the record writer and reader; every
record kind validates against docs/profiling.schema.json."""

from __future__ import annotations

import io
import json
from pathlib import Path

import jsonschema
import pytest
from accy.errors import InputError
from accy.profiling import PROTOCOL, SUITES, RecordWriter, read_records, suite_cases
from accy.profiling.summary import summarize
from accy.profiling.workloads import WORKLOADS

SCHEMA = Path(__file__).resolve().parents[3] / "docs" / "profiling.schema.json"


def test_suites_are_exactly_the_original_cases():
    assert SUITES["quick"] == [
        ("elementwise_chain", 256, 8), ("indexing_mix", 128, 2), ("reduction_row_norm", 32, 128),
        ("coordinate_mesh", 16, 16), ("nbody_all_pairs", 16, 3), ("mlp_two_layer", 32, 64),
        ("residual_block", 32, 64), ("halo_stencil", 16, 16), ("attention_softmax", 16, 32),
        ("transformer_block", 16, 32), ("decoder_block", 16, 32)]
    assert len(SUITES["standard"]) == 13 and ("indexing_mix", 8192, 4) in SUITES["standard"]
    assert [c for c in SUITES["scaling"] if c[0] == "nbody_all_pairs"] == [
        ("nbody_all_pairs", 8, 3), ("nbody_all_pairs", 16, 3), ("nbody_all_pairs", 32, 3)]
    used = {c[0] for cases in SUITES.values() for c in cases}
    assert used == set(WORKLOADS) and len(WORKLOADS) == 11
    with pytest.raises(InputError, match="known: quick, scaling, standard"):
        suite_cases("fast")


def test_summary_statistics():
    s = summarize([5, 1, 4, 2, 3, 10, 6, 7, 8, 9])
    assert (s["min"], s["max"], s["median"], s["p90"], s["mean"], s["n"]) == (
        1, 10, 5.5, 9, 5.5, 10)
    assert summarize([7])["p90"] == 7


def _sample_records() -> list[dict]:
    out = io.StringIO()
    w = RecordWriter(out, "cpu", "dev")
    w.emit("start", suite="quick", samples=1, warmup=0, sweep=True, accy_version="0",
           time_s=1.0, cases=[["mlp_two_layer", 32, 64]])
    w.for_case("mlp_two_layer", 32, 64)
    w.emit("compile", kernels=2, launch_choices={"k": {"candidate": "map-wg64-ipt1",
                                                       "source": "cache"}}, cache={})
    w.emit("check", ok=True, max_abs_error=0.0)
    w.emit("phase", sample=0, phase="total", ns=10)
    w.emit("memory", sample=0, peak_bytes=10, current_bytes=5, allocations=-3)
    w.emit("pass", sample=0, stage="contract", runs=1, ns=3, ops_before=4, ops_after=3,
           **{"pass": "cse"})
    w.emit("analysis", sample=0, stage="contract", analysis="uses", hits=1, misses=0)
    w.emit("summary", metric="phase", name="total", unit="ns", **summarize([10]))
    w.emit("candidate", kernel="k", key="f", shape_family="s", index=0, label="map-wg64-ipt1",
           median_ns=5, times_ns=[5])
    w.emit("best", kernel="k", label="map-wg64-ipt1", median_ns=5, cached=True)
    w.emit("error", message="x")
    w.for_case(None, None, None)
    w.emit("end", wall_ns=1, records=12, ok=True)
    return [json.loads(line) for line in out.getvalue().splitlines()]


def test_every_event_validates_and_a_bad_record_does_not():
    validator = jsonschema.Draft202012Validator(json.loads(SCHEMA.read_text()))
    records = _sample_records()
    assert {r["event"] for r in records} >= {"start", "phase", "memory", "pass", "analysis",
                                            "summary", "candidate", "best", "end"}
    for r in records:
        validator.validate(r)
        assert r["protocol"] == PROTOCOL
    bad = dict(records[3], ns=-1)
    assert not validator.is_valid(bad)
    assert not validator.is_valid({k: v for k, v in records[3].items() if k != "device"})


def test_reader_names_the_bad_line(tmp_path):
    path = tmp_path / "run.jsonl"
    path.write_text(json.dumps({"protocol": PROTOCOL, "event": "end"}) + "\n{oops\n")
    with pytest.raises(InputError, match=r"run.jsonl:2: not JSON"):
        read_records(path)
    path.write_text(json.dumps({"protocol": "other/9"}) + "\n")
    with pytest.raises(InputError, match="expected 'accy-profile/1'"):
        read_records(path)


def test_reader_of_a_missing_file_or_a_directory_is_an_input_error(tmp_path):
    """`accy profile report nope.jsonl` printed a FileNotFoundError traceback."""
    for path in (tmp_path / "nope.jsonl", tmp_path):
        with pytest.raises(InputError, match="cannot read profile"):
            read_records(path)


def test_report_writes_both_plots_for_scaling_runs(tmp_path):
    from accy.profiling.report import render_table, write_plots

    records = []
    for n in (8, 16, 32):
        w = RecordWriter(None, "cpu", "dev")
        w.for_case("nbody_all_pairs", n, 3)
        for phase in ("total", "contract", "codegen"):
            w.emit("summary", metric="phase", name=phase, unit="ns", **summarize([n * 1e5]))
        records += w.records
    assert "nbody_all_pairs" in render_table(records)
    paths = write_plots(records, tmp_path / "plots")
    assert [p.name for p in paths] == ["phases.png", "scaling.png"]
    for p in paths:
        assert p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and p.stat().st_size > 5000
