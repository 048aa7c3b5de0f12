"""Family entries: a new measurement replaces an old one only when faster or when the old
one is stale (another accy version); the family key separates variant spaces and dtypes."""

from __future__ import annotations

import accy
from accy.families import Candidate, Family, Signature, Variant
from accy.tuning.cache import TuningCache, TuningEntry
from accy.tuning.families import (
    family_choices,
    family_shape_key,
    space_version,
    store_family_entries,
)

FAM = Family("probe", Signature(()), "numpy:sort",
             (Variant("a", "numpy:sort", "", (Candidate(64), Candidate(128))),))


def _entry(choice: str, median: int, version: str = accy.__version__, dtype: str = "f32"):
    return TuningEntry("dev", "probe.a", family_shape_key(space_version(FAM), dtype, "n10"),
                       choice, median, 0, 3, "family", version)


def test_better_or_stale_replaces_otherwise_the_old_entry_stays(tmp_path):
    cache = TuningCache(tmp_path / "t.json")
    assert store_family_entries([_entry("wg128-ipt1", 100)], cache)
    assert not store_family_entries([_entry("wg64-ipt1", 200)], cache)  # slower: kept
    (kept,) = cache.load().values()
    assert (kept.choice, kept.median_ns) == ("wg128-ipt1", 100)
    assert store_family_entries([_entry("wg64-ipt1", 50)], cache)  # faster: replaces
    assert next(iter(cache.load().values())).choice == "wg64-ipt1"
    store_family_entries([_entry("wg128-ipt1", 1, version="0.0.0-old")], cache)
    assert store_family_entries([_entry("wg64-ipt1", 900)], cache)  # the old one is stale


def test_key_separates_dtypes_and_variant_spaces(tmp_path):
    cache = TuningCache(tmp_path / "t.json")
    cache.store([_entry("wg128-ipt1", 100)])
    choices = family_choices("dev", cache)
    var = FAM.variants[0]
    assert choices.candidate(FAM, var, "f32", "n10") == Candidate(128)
    assert choices.candidate(FAM, var, "f64", "n10") is None
    assert choices.candidate(FAM, var, "f32", "n11") is None
    assert family_choices("other-device", cache).candidate(FAM, var, "f32", "n10") is None
    grown = Family("probe", Signature(()), "numpy:sort",
                   (Variant("a", "numpy:sort", "", (Candidate(64), Candidate(128),
                                                    Candidate(256))),))
    assert space_version(grown) != space_version(FAM)
    assert family_choices("dev", cache).candidate(grown, grown.variants[0], "f32", "n10") is None
