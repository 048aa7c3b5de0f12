"""Cross-package fixtures: ``backend`` runs a test once per discovered backend.

A backend whose probe says it is unavailable here skips with the probe's reason;
testing-only backends (the recording backend) are left out.
"""

from __future__ import annotations

import pytest


def _backend_names() -> list[str]:
    try:
        from accy.plugins import backend_descriptors
    except ImportError:
        return ["cpu"]
    names = [n for n, d in sorted(backend_descriptors().items()) if not d.testing_only]
    return names or ["cpu"]


@pytest.fixture(params=_backend_names())
def backend(request) -> str:
    """Name of a backend that is available here (others skip with their probe's reason)."""
    from accy.plugins import backend_descriptors

    name = request.param
    desc = backend_descriptors().get(name)
    if desc is None:
        pytest.skip(f"backend {name!r} is not installed")
    probe = desc.probe()
    if not probe.available:
        pytest.skip(f"backend {name!r} unavailable: {probe.reason}")
    return name
