"""Launch tuning: candidates, measurement, the tuning cache and its archives.

- :mod:`accy.tuning.candidates`: :class:`LaunchCandidate` and the candidates of a region.
- :mod:`accy.tuning.measure`: the measurement rule (warmup, samples, upper median, ties).
- :mod:`accy.tuning.cache`: the persistent cache keyed by (device fingerprint, kernel
  fingerprint, shape family), atomic writes, the resolver the compiler consults.
- :mod:`accy.tuning.archive`: versioned, checksummed export/import (all-or-nothing).
- :mod:`accy.tuning.sweep`: sweeps of a program's regions and of kernel-library families.

Importing this package is light (no numpy-heavy or backend imports).
"""

from __future__ import annotations

from accy.tuning.candidates import (
    MAX_CANDIDATES,
    LaunchCandidate,
    default_candidate,
    parse_candidates,
    region_candidates,
)

__all__ = [
    "MAX_CANDIDATES",
    "LaunchCandidate",
    "default_candidate",
    "parse_candidates",
    "region_candidates",
]
