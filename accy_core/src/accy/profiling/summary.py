"""Summary statistics of repeated samples: min, median, p90, max, mean.

``median`` is the middle value (the mean of the two middle values for an even count);
``p90`` is the nearest-rank 90th percentile ``sorted[ceil(0.9·n) − 1]``.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence

__all__ = ["STATS", "p90", "summarize"]

STATS = ("min", "median", "p90", "max", "mean")


def p90(values: Sequence[float]) -> float:
    """Nearest-rank 90th percentile of non-empty ``values``."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(0.9 * len(ordered)) - 1)]


def summarize(values: Sequence[float]) -> dict[str, float]:
    """``{"min", "median", "p90", "max", "mean", "n"}`` of non-empty ``values``."""
    vals = list(values)
    return {"min": min(vals), "median": float(statistics.median(vals)), "p90": p90(vals),
            "max": max(vals), "mean": float(statistics.fmean(vals)), "n": len(vals)}
