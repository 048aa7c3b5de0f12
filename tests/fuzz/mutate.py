"""A mutator of valid IR texts: token-level edits that keep most of the text well formed.

The seeds are the golden IR files (every op, attribute kind and dtype) and programs from the
generator; the edits delete, duplicate, swap and insert tokens, replace them with
interesting ones (boundary integers, huge and special floats, other dtypes, stray
punctuation, unknown names, malformed strings, deep nesting) and truncate the text.
"""

from __future__ import annotations

import re
from pathlib import Path

from hypothesis import strategies as st

GOLDEN = Path(__file__).resolve().parents[2] / "accy_core" / "tests" / "ir" / "golden"

_SPLIT = re.compile(r'\s+|"(?:[^"\\]|\\.)*"|[%@]?[A-Za-z0-9_.$]+|->|.', re.S)

INTERESTING = (
    "0", "-1", "1", "2147483647", "2147483648", "-2147483649", "4294967296",
    "9223372036854775807", "9223372036854775808", "-9223372036854775809",
    "18446744073709551616", "1e400", "-1e400", "1.0e-400", "0.5", "-0.0", "nan", "inf",
    "-inf", "9" * 5000, "f32", "f64", "i32", "i64", "u32", "bool", "f16", "i8", "tensor",
    "[", "]", "{", "}", "(", ")", "<", ">", ",", ":", "=", "^", "->", "%arg0", "%0", "%999",
    "@f", "@", "%", "arith.add", "arith.cast", "tensor.constant", "dispatch.region",
    "dispatch.yield", "func.return", "reduce.sum", "library.sort", "nope.op", "dense",
    "dense<", '"0x00"', '"0xzz"', '"\\u12"', '"', '"\\', "true", "false", "axes", "shape",
    "value", "perm", "slot", "[" * 200, "dense<" * 100, "[[[[1]]]]", "[]", "\x00", "\u00e9",
)


def seeds() -> list[str]:
    """The golden IR texts (without their leading comment lines)."""
    out = []
    for path in sorted(GOLDEN.glob("*.accy")):
        lines = path.read_text().split("\n")
        while lines and lines[0].startswith("//"):
            lines.pop(0)
        out.append("\n".join(lines))
    return out


@st.composite
def mutants(draw, sources: st.SearchStrategy[str]) -> str:
    """A text from ``sources`` with one to four random token edits."""
    toks = _SPLIT.findall(draw(sources))
    for _ in range(draw(st.integers(1, 4))):
        if not toks:
            break
        i = draw(st.integers(0, len(toks) - 1))
        kind = draw(st.sampled_from(["delete", "dup", "swap", "replace", "replace", "insert",
                                     "truncate"]))
        if kind == "delete":
            del toks[i:i + draw(st.integers(1, 3))]
        elif kind == "dup":
            toks.insert(i, toks[i])
        elif kind == "swap":
            j = draw(st.integers(0, len(toks) - 1))
            toks[i], toks[j] = toks[j], toks[i]
        elif kind == "replace":
            toks[i] = draw(st.sampled_from(INTERESTING))
        elif kind == "insert":
            toks.insert(i, " " + draw(st.sampled_from(INTERESTING)) + " ")
        else:
            toks = toks[:i]
    return "".join(toks)
