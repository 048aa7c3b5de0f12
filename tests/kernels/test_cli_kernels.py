"""``accy kernels``: every family and variant listed, with the backends it runs on."""

from __future__ import annotations

import json

from accy.cli.main import main


def test_accy_kernels_json(capsys):
    assert main(["kernels", "--json"]) == 0
    table = json.loads(capsys.readouterr().out)
    names = {v["name"] for f in table["families"] for v in f["variants"]}
    assert {"spmv.csr_scalar", "spmv.csr_vector", "spmv.coo", "spmv.ell", "spmv.sell",
            "sort.radix", "gather.direct", "random.philox4x32"} <= names
    runs = {v["name"]: v["runs_on"] for f in table["families"] for v in f["variants"]}
    assert "cpu" in runs["sort.radix"]


def test_accy_kernels_text(capsys):
    assert main(["kernels"]) == 0
    out = capsys.readouterr().out
    assert "scatter.last_write" in out and "runs on:" in out
