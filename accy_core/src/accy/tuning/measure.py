"""The measurement rule every sweep uses, and the choice of the best candidate.

Measuring a candidate: ``warmup`` untimed launches, then ``samples`` timed launches, each
followed by a synchronize, timed on the host wall clock (``time.perf_counter_ns``). The
candidate's figure is the *upper median* ``sorted(times)[n // 2]`` (ns). The best candidate
has the lowest median; ties go to the one with more samples, then to the lower candidate
index (so the default, index 0, wins a tie).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from accy.errors import InputError

__all__ = ["Measurement", "best", "margin_ok", "measure", "measure_interleaved",
           "upper_median"]

#: Default relative margin (fraction) a family schedule must win by to be cached: 3 %.
DEFAULT_MARGIN = 0.03


@dataclass(frozen=True)
class Measurement:
    """The timings of one candidate.

    Attributes:
        index: the candidate's position in its list (0 = the default).
        label: the candidate's label.
        times_ns: every timed launch, host wall clock, in nanoseconds.
        median_ns: the upper median of ``times_ns`` (nanoseconds).
    """

    index: int
    label: str
    times_ns: tuple[int, ...]
    median_ns: int

    @property
    def samples(self) -> int:
        """Number of timed launches."""
        return len(self.times_ns)


def upper_median(times_ns: Sequence[int]) -> int:
    """``sorted(times_ns)[len // 2]``: the upper median (nanoseconds).

    Raises:
        InputError: no times.
    """
    if not times_ns:
        raise InputError("upper median of no samples; measure at least one sample")
    return int(sorted(times_ns)[len(times_ns) // 2])


def measure(launch: Callable[[], None], synchronize: Callable[[], None], *, index: int = 0,
            label: str = "", warmup: int = 2, samples: int = 5,
            clock: Callable[[], int] = time.perf_counter_ns,
            before: Callable[[], None] | None = None) -> Measurement:
    """Time one candidate by the rule in the module docstring.

    Args:
        launch: starts one launch of the candidate (asynchronous is fine).
        synchronize: waits until the launch finished.
        index, label: the candidate's position and label (copied into the result).
        warmup: untimed launches first (each synchronized).
        samples: timed launches (at least 1).
        clock: nanosecond clock (tests inject a fake one).
        before: called (then ``synchronize``) before every launch, untimed: resets state
            a launch consumes (family sweeps zero the outputs).

    Raises:
        InputError: ``samples < 1`` or ``warmup < 0``.
    """
    if samples < 1 or warmup < 0:
        raise InputError(f"measure: need samples >= 1 and warmup >= 0, got samples={samples}, "
                         f"warmup={warmup}")
    def prepare() -> None:
        if before is not None:
            before()
            synchronize()

    for _ in range(warmup):
        prepare()
        launch()
        synchronize()
    times = []
    for _ in range(samples):
        prepare()
        start = clock()
        launch()
        synchronize()
        times.append(clock() - start)
    return Measurement(index, label, tuple(times), upper_median(times))


@dataclass(frozen=True)
class Timed:
    """One candidate for :func:`measure_interleaved`: ``launch``, ``synchronize`` and the
    optional untimed ``before`` (as :func:`measure`), its index and label."""

    index: int
    label: str
    launch: Callable[[], None]
    synchronize: Callable[[], None]
    before: Callable[[], None] | None = None


def measure_interleaved(items: Sequence[Timed], *, warmup: int = 2, samples: int = 5,
                        clock: Callable[[], int] = time.perf_counter_ns) -> list[Measurement]:
    """Time several candidates by the rule of :func:`measure`, with the samples taken
    round-robin (sample 1 of every candidate, then sample 2, ...) after every candidate's
    warm-up, so that drift (machine load, clocks, a cold first run) hits all candidates
    alike instead of the first one measured. Returns one measurement per item, in order.

    Raises:
        InputError: ``samples < 1`` or ``warmup < 0``.
    """
    if samples < 1 or warmup < 0:
        raise InputError(f"measure: need samples >= 1 and warmup >= 0, got samples={samples}, "
                         f"warmup={warmup}")

    def once(t: Timed, timed: bool = True) -> int:
        if t.before is not None:
            t.before()
            t.synchronize()
        start = clock() if timed else 0
        t.launch()
        t.synchronize()
        return clock() - start if timed else 0

    for t in items:
        for _ in range(warmup):
            once(t, timed=False)
    times: list[list[int]] = [[] for _ in items]
    for _ in range(samples):
        for k, t in enumerate(items):
            times[k].append(once(t))
    return [Measurement(t.index, t.label, tuple(ts), upper_median(ts))
            for t, ts in zip(items, times, strict=True)]


def best(measurements: Sequence[Measurement]) -> Measurement:
    """The lowest median; ties: more samples, then the lower index.

    Raises:
        InputError: no measurements.
    """
    if not measurements:
        raise InputError("best of no measurements; measure at least one candidate")
    return min(measurements, key=lambda m: (m.median_ns, -m.samples, m.index))


def margin_ok(measurements: Sequence[Measurement], margin: float = DEFAULT_MARGIN) -> bool:
    """Whether the best beats the runner-up by at least ``margin`` (fraction of the best).

    One candidate has no runner-up: there is nothing to choose, so this returns False.
    """
    if len(measurements) < 2:
        return False
    win = best(measurements)
    rest = [m for m in measurements if m is not win]
    runner_up = min(m.median_ns for m in rest)
    return runner_up >= win.median_ns * (1.0 + margin)
