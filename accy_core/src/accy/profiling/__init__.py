"""Profiling suite: workloads, suites, JSON-lines records, summaries and reports.

- :mod:`accy.profiling.workloads`: the builder programs (one module each, numpy references).
- :mod:`accy.profiling.suites`: ``quick``, ``standard``, ``scaling``.
- :mod:`accy.profiling.records`: protocol version and record writer/reader.
- :mod:`accy.profiling.runner`: :func:`run_profile` (``accy profile``).
- :mod:`accy.profiling.report`: table and PNG plots (``accy profile report``).

See ``docs/profiling.md`` for what each workload computes and the record schema.
"""

from __future__ import annotations

from accy.profiling.records import PHASES, PROTOCOL, RecordWriter, read_records
from accy.profiling.suites import SUITES, suite_cases

__all__ = ["PHASES", "PROTOCOL", "SUITES", "RecordWriter", "read_records", "run_profile",
           "suite_cases"]


def run_profile(*args, **kwargs):
    """See :func:`accy.profiling.runner.run_profile` (imported on first use)."""
    from accy.profiling.runner import run_profile as run

    return run(*args, **kwargs)
