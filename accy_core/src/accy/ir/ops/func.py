"""``func`` ops: function terminator.

Example::

    func.return %3, %4 : (f32[4], f32[4]) -> ()
"""

from __future__ import annotations

from accy.ir.ops.registry import OpDef, register_op

register_op(OpDef("func.return", None, lambda types, attrs: [], None,
                  traits=frozenset({"terminator"}), summary="return values from a function"))

__all__: list[str] = []
