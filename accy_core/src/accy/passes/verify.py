"""Check that the module is well formed (the first pass of the contract stage)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from accy.ir import Module
from accy.passes.base import Pass, PassContext

__all__ = ["VerifyPass"]


@dataclass(frozen=True)
class VerifyPass(Pass):
    """Run the tensor IR verifier; changes nothing.

    Raises:
        VerifyError: the module is malformed (the message names the op and its position).
    """

    name: ClassVar[str] = "verify"
    summary: ClassVar[str] = "verify the module (types, attributes, SSA dominance, terminators)"
    preserves: ClassVar[tuple[str, ...]] = ("use-counts", "liveness")

    def run(self, module: Module, ctx: PassContext) -> bool:
        module.verify()
        return False
