"""The measuring rule on the recording backend: warmup, samples, upper median, tie rules."""

from __future__ import annotations

import itertools

import pytest
from accy.backend import Geometry, RecordingBackend
from accy.errors import InputError
from accy.tuning.measure import Measurement, best, margin_ok, measure, upper_median


def _kernel():
    from accy.kernel import KernelBuilder

    kb = KernelBuilder("fill", 32)
    y = kb.buffer("y", "f32", "write")
    i = kb.global_id()
    kb.store(y, i, 1.0)
    return kb.build()


def _fake_clock(durations):
    """A clock whose successive (start, stop) pairs differ by ``durations``."""
    ticks = []
    now = 0
    for d in durations:
        ticks += [now, now + d]
        now += d + 1000
    it = iter(ticks)
    return lambda: next(it)


def test_warmup_and_samples_are_launched_and_synchronized():
    be = RecordingBackend()
    h = be.load(be.compile(_kernel()))
    buf = be.allocate(32 * 4)
    clock = _fake_clock([50, 10, 40, 30, 20])
    m = measure(lambda: be.launch(h, Geometry(1, 32), [buf], []), be.synchronize,
                warmup=3, samples=5, clock=clock, label="map-wg32-ipt1")
    assert be.calls["launch"] == 8
    assert be.calls["synchronize"] == 8
    names = [e[0] for e in be.log if e[0] in ("launch", "synchronize")]
    assert names == ["launch", "synchronize"] * 8  # every launch is synchronized
    assert m.times_ns == (50, 10, 40, 30, 20)
    assert m.median_ns == 30 == sorted(m.times_ns)[5 // 2]
    be.free(buf)


def test_upper_median_takes_the_upper_middle_for_even_counts():
    assert upper_median([4, 1, 3, 2]) == 3
    assert upper_median([7]) == 7
    with pytest.raises(InputError):
        upper_median([])


def test_best_is_lowest_median_then_more_samples_then_lower_index():
    a = Measurement(0, "a", (10, 10, 10), 10)
    b = Measurement(1, "b", (5, 9, 9), 9)
    assert best([a, b]) is b
    c = Measurement(2, "c", (9, 9, 9, 9, 9), 9)
    assert best([a, b, c]) is c  # tie on median: more samples wins
    d = Measurement(3, "d", (1, 9, 9, 9, 9), 9)
    assert best([a, d, c]) is c  # tie on median and samples: lower index
    assert best([d, c]) is c


def test_margin_needs_a_runner_up_slower_by_the_fraction():
    win = Measurement(0, "a", (100,), 100)
    assert not margin_ok([win])
    assert margin_ok([win, Measurement(1, "b", (103,), 103)], 0.03)
    assert not margin_ok([win, Measurement(1, "b", (102,), 102)], 0.03)


def test_bad_counts_are_refused():
    with pytest.raises(InputError, match="samples >= 1"):
        measure(lambda: None, lambda: None, samples=0)
    counter = itertools.count()
    m = measure(lambda: None, lambda: None, warmup=0, samples=1, clock=lambda: next(counter))
    assert m.samples == 1


def test_interleaved_samples_go_round_robin_after_every_warmup():
    from accy.tuning.measure import Timed, measure_interleaved

    log = []
    items = [Timed(i, f"c{i}", lambda i=i: log.append(("launch", i)), lambda: None,
                   lambda i=i: log.append(("reset", i))) for i in range(3)]
    ms = measure_interleaved(items, warmup=1, samples=2, clock=_fake_clock([5, 1, 3, 5, 1, 3]))
    launches = [i for what, i in log if what == "launch"]
    assert launches == [0, 1, 2, 0, 1, 2, 0, 1, 2]  # warm-ups, then two rounds
    assert log.count(("reset", 0)) == 3
    assert [m.median_ns for m in ms] == [5, 1, 3] and [m.label for m in ms] == ["c0", "c1", "c2"]
    with pytest.raises(InputError):
        measure_interleaved(items, samples=0)
