"""Example counts of the fuzz tests: short in every run, ten thousand under the long profile.

The short run is derandomized (the same programs on every push, so CI is reproducible and a
red build means the change broke something); the long profile draws fresh programs.
"""

from __future__ import annotations

from hypothesis import HealthCheck, settings

LONG = "long"


def fuzz_settings(short: int) -> settings:
    """``short`` examples normally; the long profile's count under ``--hypothesis-profile=long``."""
    long = settings.get_current_profile_name() == LONG
    return settings(
        max_examples=settings().max_examples if long else short, deadline=None,
        derandomize=not long, print_blob=True,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                               HealthCheck.filter_too_much],
    )
