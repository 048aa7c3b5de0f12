"""Lower indexing ops (gather, scatter, sort, ...) to kernel-library calls.

The core op set of this release has no indexing ops yet; the pass exists so pipelines
that name it (with ``kernel-library=enabled|disabled``) stay valid when the kernel
families' ops arrive.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

from accy.ir import Module
from accy.passes.base import Pass, PassContext

__all__ = ["IndexingLoweringPass"]


@dataclass(frozen=True)
class IndexingLoweringPass(Pass):
    """Turn indexing ops into kernel-library calls (or generic loops when disabled)."""

    name: ClassVar[str] = "indexing-lowering"
    summary: ClassVar[str] = "lower gather/scatter/sort ops to kernel-library calls"
    kernel_library: str = field(default="enabled", metadata={"choices": ("enabled", "disabled")})

    def run(self, module: Module, ctx: PassContext) -> bool:
        return False
