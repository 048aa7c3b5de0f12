"""Hostile IR text: nesting and literal sizes the parser refuses with a ParseError.

Regression tests for the fuzzer's IR-text mutator (tests/fuzz) and issue 10: about 1,000
``[`` or 500 ``dense<`` used to raise a raw RecursionError.
"""

from __future__ import annotations

import accy
import pytest
from accy.errors import ParseError
from accy.ir.parser import MAX_NESTING


def _constant(value: str) -> str:
    return ("func @f() -> (f32[]) {\n  %0 = tensor.constant {value = " + value
            + "} : () -> f32[]\n  func.return %0 : (f32[]) -> ()\n}\n")


@pytest.mark.parametrize("opening", ["[", "dense<", "dense<["])
@pytest.mark.parametrize("depth", [MAX_NESTING + 1, 500, 1000, 100_000])
def test_deep_nesting_is_a_parse_error(opening: str, depth: int) -> None:
    with pytest.raises(ParseError, match=f"nesting deeper than {MAX_NESTING} levels"):
        accy.parse_module(_constant(opening * depth))


def test_nesting_within_the_limit_parses_as_before() -> None:
    module = accy.parse_module(_constant("dense<[1.5]>"))
    assert module.functions[0].body.ops[0].attrs["value"].tolist() == 1.5
    # deep but legal attribute lists reach the verifier, which names the real problem
    text = ("func @f(%a: f32[2]) -> (f32[]) {\n  %0 = reduce.sum %a {axes = "
            + "[" * (MAX_NESTING - 1) + "0" + "]" * (MAX_NESTING - 1)
            + "} : (f32[2]) -> f32[]\n  func.return %0 : (f32[]) -> ()\n}\n")
    with pytest.raises(accy.errors.IRError):
        accy.parse_module(text)


def test_nested_regions_count_toward_the_limit() -> None:
    inner = "dispatch.yield %arg0 : (f32[]) -> ()"
    for _ in range(MAX_NESTING + 1):
        inner = ("%r = dispatch.region %arg0 {kind = \"map\"} : (f32[]) -> f32[] "
                 "{ ^(%arg0: f32[]): " + inner + " }")
    text = "func @f(%arg0: f32[]) -> (f32[]) {\n" + inner + "\n}\n"
    with pytest.raises(ParseError, match="nesting deeper"):
        accy.parse_module(text)


@pytest.mark.parametrize("where", ["attr", "extent"])
def test_integer_literals_beyond_any_dtype_are_parse_errors(where: str) -> None:
    big = "9" * 5000  # Python refuses int() of more than 4300 digits with a raw ValueError
    text = (_constant(f"dense<[{big}]>") if where == "attr"
            else f"func @f(%a: f32[{big}]) -> () {{\n  func.return : () -> ()\n}}\n")
    with pytest.raises(ParseError, match="out of range"):
        accy.parse_module(text)
