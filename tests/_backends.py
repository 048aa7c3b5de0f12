"""Backends of the cross-package tests: skip, with the reason, where one cannot run here."""

from __future__ import annotations

from typing import Any

import pytest


def require_backend(name: str) -> None:
    """Skip the calling test unless backend ``name`` is installed and its probe says it is
    available here (the skip gives the probe's reason)."""
    from accy.plugins import backend_descriptors

    desc = backend_descriptors().get(name)
    if desc is None:
        pytest.skip(f"backend {name!r} is not installed")
    probe = desc.probe()
    if not probe.available:
        pytest.skip(f"backend {name!r} unavailable: {probe.reason}")


def open_live_backend(name: str) -> Any:
    """The live backend ``name``; skip when it cannot run kernels here (the PTX-only harness
    of ``accy_backend_cuda/tests/test_ptx_programs.py`` runs the program tests with
    ``cuda``, which then skip here)."""
    from accy.errors import BackendUnavailable
    from accy.plugins import open_backend

    try:
        return open_backend(name)
    except BackendUnavailable as e:
        pytest.skip(str(e))
