"""Cross-package fixtures: ``backend`` runs a test once per discovered backend.

A backend whose probe says it is unavailable here skips with the probe's reason;
testing-only backends (the recording backend) are left out.
"""

from __future__ import annotations

import pytest

from tests._backends import require_backend


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
    name = request.param
    require_backend(name)
    return name


# Hypothesis profiles of the fuzzer (tests/fuzz): the default run takes each fuzz test's
# short example count; `pytest -m fuzz --hypothesis-profile=long` runs ten thousand programs
# per backend (and ten thousand IR-text mutations). Registered here, not in tests/fuzz, so
# that the profile exists before the hypothesis plugin loads it.
try:
    from hypothesis import HealthCheck, settings
except ImportError:  # pragma: no cover - hypothesis is a declared test dependency
    pass
else:
    settings.register_profile(
        "long", max_examples=10_000, deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
