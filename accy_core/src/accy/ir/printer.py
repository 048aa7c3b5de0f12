"""Print tensor IR in accy's textual form.

Grammar (what :mod:`accy.ir.parser` reads back)::

    module {
      func @name(%arg0: f32[4], %arg1: f32[4]) -> (f32[4]) {
        %0 = arith.add %arg0, %arg1 : (f32[4], f32[4]) -> f32[4]
        %1 = reduce.sum %0 {axes = [0], keepdims = false} : (f32[4]) -> f32[]
        func.return %0 : (f32[4]) -> ()
      }
    }

Values are numbered by position (``%argN`` for block arguments, ``%N`` for results), so
the text does not depend on the names a module was built or parsed with. Float attributes
and constants print with ``repr`` (exact round trip); constants with more than
:data:`HEX_THRESHOLD` elements print as raw little-endian hex bytes.
"""

from __future__ import annotations

import json

import numpy as np

from accy.ir.core import Block, Function, Module, Operation, Value
from accy.ir.dtypes import DType
from accy.ir.types import TensorType

__all__ = ["HEX_THRESHOLD", "format_attr", "print_module"]

HEX_THRESHOLD = 64


def _float(x: float, f32: bool = False) -> str:
    if np.isnan(x):
        return "nan"
    if np.isinf(x):
        return "inf" if x > 0 else "-inf"
    # Shortest text that reads back to the same value (float32's own shortest for f32).
    r = str(np.float32(x)) if f32 else repr(float(x))
    return r if ("." in r or "e" in r) else r + ".0"


def _dense(arr: np.ndarray) -> str:
    if arr.size > HEX_THRESHOLD:
        data = np.ascontiguousarray(arr).astype(arr.dtype.newbyteorder("<"), copy=False)
        return f'dense<"0x{data.tobytes().hex()}">'
    flat = arr.reshape(-1)
    if arr.dtype.kind == "f":
        items = [_float(float(x), arr.dtype == np.float32) for x in flat]
    elif arr.dtype.kind == "b":
        items = ["true" if x else "false" for x in flat]
    else:
        items = [str(int(x)) for x in flat]
    return f"dense<[{', '.join(items)}]>"


def format_attr(value: object) -> str:
    """Text of one attribute value."""
    if isinstance(value, (bool, np.bool_)):
        return "true" if value else "false"
    if isinstance(value, DType):
        return value.value
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    if isinstance(value, (float, np.floating)):
        return _float(float(value))
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, TensorType):
        return str(value)
    if isinstance(value, np.ndarray):
        return _dense(value)
    if isinstance(value, (tuple, list)):
        return "[" + ", ".join(format_attr(v) for v in value) + "]"
    raise TypeError(f"cannot print attribute value {value!r}")


class _Namer:
    def __init__(self) -> None:
        self.names: dict[Value, str] = {}
        self.n_args = 0
        self.n_vals = 0

    def arg(self, v: Value) -> str:
        self.names[v] = f"%arg{self.n_args}"
        self.n_args += 1
        return self.names[v]

    def result(self, v: Value) -> str:
        self.names[v] = f"%{self.n_vals}"
        self.n_vals += 1
        return self.names[v]

    def __getitem__(self, v: Value) -> str:
        return self.names.get(v, "%<undefined>")


def _types(ts: list[TensorType]) -> str:
    return "(" + ", ".join(str(t) for t in ts) + ")"


def _print_op(op: Operation, namer: _Namer, indent: str, out: list[str]) -> None:
    operands = ", ".join(namer[v] for v in op.operands)
    results = ", ".join(namer.result(r) for r in op.results)
    line = indent + (f"{results} = " if results else "") + op.name
    if operands:
        line += " " + operands
    if op.attrs:
        line += (
            " {" + ", ".join(f"{k} = {format_attr(v)}" for k, v in sorted(op.attrs.items())) + "}"
        )
    rtypes = [r.type for r in op.results]
    line += f" : {_types([v.type for v in op.operands])} -> "
    line += str(rtypes[0]) if len(rtypes) == 1 else _types(rtypes)
    if not op.regions:
        out.append(line)
        return
    for region in op.regions:
        out.append(line + " {")
        _print_block(region.block, namer, indent + "  ", out, header=True)
        line = indent + "}"
    out.append(indent + "}")


def _print_block(block: Block, namer: _Namer, indent: str, out: list[str], header: bool) -> None:
    if header:
        args = ", ".join(f"{namer.arg(a)}: {a.type}" for a in block.args)
        out.append(f"{indent[:-2]}^({args}):")
    for op in block.ops:
        _print_op(op, namer, indent, out)


def print_function(f: Function, out: list[str]) -> None:
    namer = _Namer()
    args = ", ".join(f"{namer.arg(a)}: {a.type}" for a in f.params)
    head = f"  func @{f.name}({args}) -> {_types(f.result_types)}"
    if f.attrs:
        head += (
            " attributes {"
            + ", ".join(f"{k} = {format_attr(v)}" for k, v in sorted(f.attrs.items()))
            + "}"
        )
    out.append(head + " {")
    _print_block(f.body, namer, "    ", out, header=False)
    out.append("  }")


def print_module(module: Module) -> str:
    """Return the text form of ``module`` (ends with a newline)."""
    out = ["module {"]
    for f in module.functions:
        print_function(f, out)
    out.append("}")
    return "\n".join(out) + "\n"
