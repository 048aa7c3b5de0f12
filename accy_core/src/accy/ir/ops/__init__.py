"""Op declarations by namespace; :func:`get_op_def` is the registry's entry point."""

from accy.ir.ops.registry import ATTR_KINDS, OpDef, get_op_def, op_names, register_op

__all__ = ["ATTR_KINDS", "OpDef", "get_op_def", "op_names", "register_op"]
