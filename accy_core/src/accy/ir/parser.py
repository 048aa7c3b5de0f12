"""Parse accy's textual tensor IR (the form :mod:`accy.ir.printer` writes).

Errors raise :class:`accy.errors.ParseError` with line, column and a caret under the
offending token; type errors found after parsing raise :class:`VerifyError` through the
verifier. Nesting (``[`` lists, ``dense<``, regions) deeper than :data:`MAX_NESTING` is a
ParseError, so no text can exhaust the Python stack.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

import numpy as np

from accy.errors import InputError, ParseError, VerifyError
from accy.ir.core import Block, Function, Module, Operation, Region, Value
from accy.ir.dtypes import DType
from accy.ir.ops.registry import get_op_def
from accy.ir.types import TensorType

__all__ = ["MAX_NESTING", "parse_module"]

MAX_NESTING = 64  # levels of [ ], dense< > and nested regions together

_TOKEN = re.compile(
    r"""(?P<ws>\s+|//[^\n]*)
      |(?P<value>%[A-Za-z0-9_.$]+)
      |(?P<symbol>@[A-Za-z0-9_.$]+)
      |(?P<string>"(?:[^"\\]|\\.)*")
      |(?P<number>-?(?:\d+\.\d*(?:[eE][+-]?\d+)?|\d+[eE][+-]?\d+|\d+)|-?inf\b|nan\b)
      |(?P<ident>[A-Za-z_][A-Za-z0-9_.]*)
      |(?P<arrow>->)
      |(?P<punct>[{}()\[\],:=<>^])""",
    re.VERBOSE,
)


class _Tok:
    __slots__ = ("col", "kind", "line", "text")

    def __init__(self, kind: str, text: str, line: int, col: int) -> None:
        self.kind, self.text, self.line, self.col = kind, text, line, col


def _lex(text: str) -> list[_Tok]:
    toks, pos, line, line_start = [], 0, 1, 0
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None:
            src = text[line_start:].split("\n", 1)[0]
            raise ParseError(f"unexpected character {text[pos]!r}", line, pos - line_start + 1, src)
        kind = m.lastgroup or ""
        if kind != "ws":
            toks.append(_Tok(kind, m.group(), line, pos - line_start + 1))
        nl = m.group().count("\n")
        if nl:
            line += nl
            line_start = pos + m.group().rfind("\n") + 1
        pos = m.end()
    toks.append(_Tok("eof", "", line, pos - line_start + 1))
    return toks


class _Parser:
    def __init__(self, text: str, source: str | None = None) -> None:
        self.lines = text.split("\n")
        self.toks = _lex(text)
        self.i = 0
        self.source = source
        self.depth = 0

    # ------------------------------------------------------------ token helpers
    def peek(self) -> _Tok:
        return self.toks[self.i]

    def next(self) -> _Tok:
        t = self.toks[self.i]
        self.i += 1
        return t

    def error(self, msg: str, tok: _Tok | None = None) -> ParseError:
        t = tok or self.peek()
        src = self.lines[t.line - 1] if 0 < t.line <= len(self.lines) else ""
        return ParseError(msg, t.line, t.col, src)

    def expect(self, text: str) -> _Tok:
        t = self.next()
        if t.text != text:
            got = t.text or "end of input"
            raise self.error(f"expected '{text}', got '{got}'", t)
        return t

    def integer(self, t: _Tok) -> int:
        """The value of integer token ``t``; ParseError past 64 digits (no accy integer is
        that long, and Python refuses to convert more than 4300)."""
        if len(t.text.lstrip("-")) > 64:
            raise self.error(f"integer literal of {len(t.text)} digits is out of range", t)
        return int(t.text)

    def enter(self) -> None:
        """One level deeper (a list, dense literal or region); ParseError past the limit."""
        self.depth += 1
        if self.depth > MAX_NESTING:
            raise self.error(f"nesting deeper than {MAX_NESTING} levels")

    def accept(self, text: str) -> bool:
        if self.peek().text == text:
            self.i += 1
            return True
        return False

    # ------------------------------------------------------------ grammar
    def parse_type(self) -> TensorType:
        t = self.next()
        if t.kind != "ident":
            raise self.error(f"expected a tensor type like f32[4], got '{t.text}'", t)
        try:
            dtype = DType.parse(t.text)
        except VerifyError as e:
            raise self.error(e.message, t) from None
        self.expect("[")
        shape = []
        while not self.accept("]"):
            n = self.next()
            if n.kind != "number" or not n.text.lstrip("-").isdigit():
                raise self.error(f"expected an integer extent, got '{n.text}'", n)
            shape.append(self.integer(n))
            if self.peek().text != "]":
                self.expect(",")
        try:
            return TensorType(dtype, tuple(shape))
        except VerifyError as e:
            raise self.error(e.message, t) from None

    def parse_type_list(self) -> list[TensorType]:
        self.expect("(")
        out = []
        while not self.accept(")"):
            out.append(self.parse_type())
            if self.peek().text != ")":
                self.expect(",")
        return out

    def parse_attr_value(self) -> Any:
        t = self.peek()
        if t.text == "[":
            self.next()
            self.enter()
            items = []
            while not self.accept("]"):
                items.append(self.parse_attr_value())
                if self.peek().text != "]":
                    self.expect(",")
            self.depth -= 1
            return tuple(items)
        self.next()
        if t.kind == "number":
            if t.text.lstrip("-").isdigit():
                return self.integer(t)
            return float(t.text)
        if t.kind == "string":
            return self.string_value(t)
        if t.text in ("true", "false"):
            return t.text == "true"
        if t.text == "dense":
            self.enter()
            value = self.parse_dense()
            self.depth -= 1
            return value
        if t.kind == "ident":
            try:
                dtype = DType.parse(t.text)
            except VerifyError:
                raise self.error(f"unknown attribute value '{t.text}'", t) from None
            if self.peek().text == "[":
                self.i -= 1
                return self.parse_type()
            return dtype
        raise self.error(f"expected an attribute value, got '{t.text}'", t)

    def string_value(self, t: _Tok) -> str:
        """The value of string token ``t`` (JSON escapes); ParseError if malformed."""
        try:
            return json.loads(t.text)
        except ValueError as e:
            msg = f"malformed string literal: {e.msg}; escape '\\' and '\"' as in JSON"
            raise self.error(msg, t) from None

    def parse_dense(self) -> Any:
        self.expect("<")
        t = self.peek()
        if t.kind == "string":
            self.next()
            payload = self.string_value(t)
            if not payload.startswith("0x"):
                raise self.error("hex dense payload must start with 0x", t)
            try:
                value: Any = ("hex", bytes.fromhex(payload[2:]))
            except ValueError:
                raise self.error("malformed hex dense payload", t) from None
        else:
            value = ("list", self.parse_attr_value())
        self.expect(">")
        return value

    def parse_attr_dict(self) -> dict[str, Any]:
        attrs: dict[str, Any] = {}
        self.expect("{")
        while not self.accept("}"):
            k = self.next()
            if k.kind not in ("ident", "string"):
                raise self.error(f"expected an attribute name, got '{k.text}'", k)
            self.expect("=")
            attrs[self.string_value(k) if k.kind == "string" else k.text] = self.parse_attr_value()
            if self.peek().text != "}":
                self.expect(",")
        return attrs

    def use(self, scope: dict[str, Value], tok: _Tok) -> Value:
        if tok.text not in scope:
            raise self.error(f"use of undefined value {tok.text}", tok)
        return scope[tok.text]

    def parse_result_names(self) -> list[_Tok]:
        """``%a, %b =`` before an op (empty when the op defines nothing)."""
        names: list[_Tok] = []
        if self.peek().kind == "value":
            while True:
                names.append(self.next())
                if not self.accept(","):
                    break
            self.expect("=")
        return names

    def parse_op(self, block: Block, scope: dict[str, Value]) -> Operation:
        names = self.parse_result_names()
        name_tok = self.next()
        if name_tok.kind != "ident" or "." not in name_tok.text:
            raise self.error(f"expected an op name like arith.add, got '{name_tok.text}'", name_tok)
        try:
            op_def = get_op_def(name_tok.text)
        except VerifyError as e:
            raise self.error(e.message, name_tok) from None
        operands = []
        while self.peek().kind == "value":
            operands.append(self.use(scope, self.next()))
            if not self.accept(","):
                break
        attrs = self.parse_attr_dict() if self.peek().text == "{" else {}
        self.expect(":")
        operand_types = self.parse_type_list()
        self.expect("->")
        result_types = self.parse_type_list() if self.peek().text == "(" else [self.parse_type()]
        if len(operand_types) != len(operands):
            raise self.error(
                f"'{name_tok.text}' lists {len(operand_types)} operand types "
                f"for {len(operands)} operands",
                name_tok,
            )
        for v, t in zip(operands, operand_types, strict=True):
            if v.type != t:
                raise self.error(
                    f"operand type {t} does not match the value's type {v.type}", name_tok
                )
        if len(names) != len(result_types):
            raise self.error(
                f"'{name_tok.text}' defines {len(names)} values but has "
                f"{len(result_types)} result types",
                name_tok,
            )
        attrs = self.convert_attrs(op_def, attrs, result_types, name_tok)
        regions = []
        if self.peek().text == "{":
            regions.append(self.parse_region())
        where = f"{self.source}:{name_tok.line}" if self.source else f"line {name_tok.line}"
        op = Operation(name_tok.text, operands, result_types, attrs, regions, location=where)
        for tok, r in zip(names, op.results, strict=True):
            if tok.text in scope:
                raise self.error(f"value {tok.text} is defined twice", tok)
            scope[tok.text] = r
        block.append(op)
        return op

    def convert_attrs(self, op_def, attrs, result_types, tok) -> dict[str, Any]:
        out = {}
        for k, v in attrs.items():
            kind = op_def.attr_kind(k)
            if kind == "dense":
                out[k] = self.to_dense(v, result_types, tok)
            elif kind == "ints" and isinstance(v, tuple):
                out[k] = tuple(v)
            else:
                out[k] = v
        return out

    def to_dense(self, v, result_types, tok) -> np.ndarray:
        if (
            not (isinstance(v, tuple) and len(v) == 2 and v[0] in ("hex", "list"))
            or len(result_types) != 1
        ):
            raise self.error("dense attribute needs dense<...> and one result type", tok)
        t = result_types[0]
        if v[0] == "hex":
            dt = t.dtype.numpy.newbyteorder("<")
            if len(v[1]) != t.num_elements * dt.itemsize:
                raise self.error(f"hex payload has {len(v[1])} bytes, {t} needs {t.nbytes}", tok)
            return np.frombuffer(v[1], dtype=dt).astype(t.dtype.numpy).reshape(t.shape)
        items = v[1]
        if len(items) != t.num_elements:
            raise self.error(
                f"dense literal has {len(items)} elements, {t} needs {t.num_elements}", tok
            )
        for x in items:
            if not _literal_fits(x, t.dtype):
                raise self.error(f"dense literal element {x!r} is not a valid {t.dtype} value", tok)
        return np.asarray(items, dtype=t.dtype.numpy).reshape(t.shape)

    def parse_region(self) -> Region:
        self.enter()
        self.expect("{")
        self.expect("^")
        self.expect("(")
        block = Block()
        scope: dict[str, Value] = {}
        while not self.accept(")"):
            self.bind_arg(block, scope)
            if self.peek().text != ")":
                self.expect(",")
        self.expect(":")
        while not self.accept("}"):
            self.parse_op(block, scope)
        self.depth -= 1
        return Region(block)

    def bind_arg(self, block: Block, scope: dict[str, Value]) -> None:
        tok = self.next()
        if tok.kind != "value":
            raise self.error(f"expected an argument like %arg0, got '{tok.text}'", tok)
        self.expect(":")
        v = block.add_arg(self.parse_type())
        if tok.text in scope:
            raise self.error(f"argument {tok.text} is defined twice", tok)
        scope[tok.text] = v

    def parse_function(self) -> Function:
        self.expect("func")
        sym = self.next()
        if sym.kind != "symbol":
            raise self.error(f"expected a function name like @main, got '{sym.text}'", sym)
        fn = Function(sym.text[1:], [], [])
        scope: dict[str, Value] = {}
        self.expect("(")
        while not self.accept(")"):
            self.bind_arg(fn.body, scope)
            if self.peek().text != ")":
                self.expect(",")
        self.expect("->")
        fn.result_types = self.parse_type_list()
        if self.accept("attributes"):
            fn.attrs = self.parse_attr_dict()
        self.expect("{")
        while not self.accept("}"):
            if self.peek().kind == "eof":
                raise self.error(f"unterminated function @{fn.name}: expected '}}'")
            self.parse_op(fn.body, scope)
        return fn

    def parse_module(self) -> Module:
        module = Module()
        wrapped = self.accept("module")
        if wrapped:
            self.expect("{")
        while self.peek().text == "func":
            module.functions.append(self.parse_function())
        if wrapped:
            self.expect("}")
        if self.peek().kind != "eof":
            raise self.error(f"expected 'func' or end of input, got '{self.peek().text}'")
        return module


def _literal_fits(x: Any, dtype: DType) -> bool:
    """Whether literal ``x`` (bool, int or float) is exactly a value of ``dtype``."""
    if dtype.is_bool:
        return isinstance(x, bool)
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        return False
    if dtype.is_float:  # inf and nan are literals; a finite value must not round to inf
        if isinstance(x, float) and not math.isfinite(x):
            return True
        try:
            with np.errstate(over="ignore"):
                return bool(np.isfinite(np.array(float(x), dtype=dtype.numpy)))
        except OverflowError:  # an int beyond the f64 range
            return False
    info = np.iinfo(dtype.numpy)
    return isinstance(x, int) and info.min <= x <= info.max


def parse_module(text: str, verify: bool = True, source: str | None = None) -> Module:
    """Parse ``text`` into a :class:`Module` (verified unless ``verify=False``).

    Every op remembers its line (``source:line`` when ``source``, e.g. the file name, is
    given; else ``line N``), so verifier and later errors point at the text.

    Raises:
        ParseError: malformed text (line:column, caret).
        VerifyError: well-formed text describing an invalid module; the message ends with
            the op's position and line (``at @f:#0 (at line 3)``).
        InputError: ``text`` is not a str (bytes, a path, None).
    """
    if not isinstance(text, str):
        hint = " (decode it: data.decode())" if isinstance(text, (bytes, bytearray)) else ""
        raise InputError(f"parse_module expects the program text as a str, got "
                         f"{type(text).__name__}{hint}; for a file: Path(p).read_text()")
    module = _Parser(text, source).parse_module()
    if verify:
        module.verify()
    return module
