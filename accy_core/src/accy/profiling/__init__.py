"""Profiling suite: workloads, suites, JSON-lines records."""
