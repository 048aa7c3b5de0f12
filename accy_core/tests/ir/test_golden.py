"""Golden text files: every registered op round-trips; ``*_invalid`` files pin error messages.

A golden file is written in printed form, optionally after leading ``//`` comment lines
(the printer writes no comments, so those are stripped before comparing). An invalid file
starts with ``// expect: <substring>``; a substring starting with ``line:column:`` is a
:class:`ParseError` at that position, anything else a :class:`VerifyError`.
"""

from __future__ import annotations

import re
from pathlib import Path

import accy
import pytest
from accy.errors import ParseError, VerifyError
from accy.ir import op_names

HERE = Path(__file__).parent
GOLDEN = sorted((HERE / "golden").glob("*.accy"))
INVALID = sorted((HERE / "invalid").glob("*_invalid.accy"))


def _body(text: str) -> str:
    lines = text.splitlines(keepends=True)
    while lines and lines[0].startswith("//"):
        lines.pop(0)
    return "".join(lines)


@pytest.mark.parametrize("path", GOLDEN, ids=lambda p: p.stem)
def test_golden_prints_byte_identical(path: Path) -> None:
    text = path.read_text()
    module = accy.parse_module(text)
    assert module.to_text() == _body(text)


@pytest.mark.parametrize("path", GOLDEN, ids=lambda p: p.stem)
def test_golden_reparse_keeps_fingerprint(path: Path) -> None:
    first = accy.parse_module(path.read_text())
    second = accy.parse_module(first.to_text())
    assert second.fingerprint() == first.fingerprint()
    assert second.to_text() == first.to_text()


def test_goldens_cover_every_registered_op() -> None:
    seen = {op.name for path in GOLDEN for op in accy.parse_module(path.read_text()).walk()}
    missing = sorted(set(op_names()) - seen)
    assert not missing, f"ops without a golden file: {missing}"


def test_one_golden_per_namespace() -> None:
    namespaces = {name.split(".")[0] for name in op_names()}
    assert namespaces <= {p.stem for p in GOLDEN}


def _expectation(path: Path) -> str:
    first = path.read_text().splitlines()[0]
    assert first.startswith("// expect: "), f"{path.name} must start with '// expect: '"
    return first.removeprefix("// expect: ")


@pytest.mark.parametrize("path", INVALID, ids=lambda p: p.stem)
def test_invalid_file_is_rejected_with_pinned_message(path: Path) -> None:
    expect = _expectation(path)
    position = re.match(r"(\d+):(\d+): ", expect)
    with pytest.raises((ParseError, VerifyError)) as info:
        accy.parse_module(path.read_text())
    err = info.value
    assert expect in str(err)
    if position:
        assert isinstance(err, ParseError)
        assert (err.line, err.column) == (int(position[1]), int(position[2]))
        if err.source_line:  # empty only at the end of the input
            assert str(err).splitlines()[-1].strip() == "^"
    else:
        assert isinstance(err, VerifyError) and not isinstance(err, ParseError)
        quoted = re.match(r"'([a-z]+\.[a-z_]+)' op", expect)
        if quoted:  # a semantic error names its op and its position
            assert err.op == quoted[1]
            assert err.position and err.position.startswith("@f:")


def test_parse_error_caret_points_at_column() -> None:
    text = "module {\n  func @f() -> () {\n    func.retrun : () -> ()\n  }\n}\n"
    with pytest.raises(ParseError) as info:
        accy.parse_module(text)
    err = info.value
    assert (err.line, err.column) == (3, 5)
    assert "unknown op 'func.retrun'; did you mean 'func.return'? known: " in err.reason
    assert "func.return" in err.reason
    _, src, caret = str(err).split("\n")
    assert caret.index("^") == src.index("func.retrun")


def test_errors_are_value_errors_and_picklable() -> None:
    import pickle

    with pytest.raises(ValueError) as info:
        accy.parse_module("module { func @f( }")
    err = pickle.loads(pickle.dumps(info.value))
    assert isinstance(err, ParseError)
    assert (err.line, err.column) == (info.value.line, info.value.column)
