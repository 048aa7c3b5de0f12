"""Structural fingerprints of tensor IR modules.

The fingerprint is the sha256 of the module's text form, which numbers values by
position: it is stable across processes and independent of value names, and any change
of an op, a type or an attribute changes it.
"""

from __future__ import annotations

from accy.hashing import sha256
from accy.ir.core import Module
from accy.ir.printer import print_module

__all__ = ["fingerprint"]


def fingerprint(module: Module) -> str:
    """Return the module's structural fingerprint (64 hex digits)."""
    return sha256(print_module(module).encode()).hexdigest()
