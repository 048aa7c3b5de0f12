"""Tensor IR: types, values, ops, modules, the builder, text form and verifier."""

from accy.ir.builder import Builder, FunctionBuilder
from accy.ir.core import Block, Function, Module, Operation, Region, Value
from accy.ir.dtypes import DType
from accy.ir.ops import OpDef, get_op_def, op_names, register_op
from accy.ir.parser import parse_module
from accy.ir.types import TensorType
from accy.ir.verifier import verify

__all__ = [
    "Block", "Builder", "DType", "Function", "FunctionBuilder", "Module", "OpDef", "Operation",
    "Region", "TensorType", "Value", "get_op_def", "op_names", "parse_module", "register_op",
    "verify",
]
