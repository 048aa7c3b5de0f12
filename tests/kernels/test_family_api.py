"""Family API: descriptors, registry from the plugin hook, variant lookup, capability checks."""

from __future__ import annotations

import pytest
from accy.errors import InputError
from accy.families import Candidate, Family, families, get_family, get_variant

ISSUE_FAMILIES = {"gather", "scatter", "scatter_add", "spmv", "spmm", "sort", "argsort",
                  "sort_pairs", "scan", "segment_sum", "filter", "random"}


def test_accy_kernels_families_are_discovered():
    found = families()
    assert ISSUE_FAMILIES <= set(found)
    assert all(isinstance(f, Family) for f in found.values())
    assert found["spmv"].provider == "accy-kernels"


def test_variant_lookup():
    fam, var = get_variant("spmv.csr_vector")
    assert fam.name == "spmv" and var.name == "csr_vector"
    assert get_variant("sort")[1].name == "radix"
    assert set(get_family("spmv").full_names()) >= {"spmv.csr_scalar", "spmv.csr_vector",
                                                     "spmv.coo", "spmv.ell", "spmv.sell"}
    with pytest.raises(InputError, match="known"):
        get_family("fft")
    with pytest.raises(InputError, match="known"):
        get_variant("spmv.bsr")


def test_candidates_and_references():
    from accy.families import resolve

    for fam in families().values():
        assert callable(resolve(fam.reference))
        for var in fam.variants:
            assert var.candidates and all(isinstance(c, Candidate) for c in var.candidates)
            assert callable(resolve(var.run))
    c = Candidate(32, 1, (("C", 32),))
    assert c.option("C") == 32 and c.with_options(sigma=4).option("sigma") == 4
    assert c.label() == "wg32-ipt1-C=32"
