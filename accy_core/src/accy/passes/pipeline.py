"""Text pipelines: ``canonicalize,einsum-lowering{strategy=beam,beam-width=8}`` ↔ passes.

Grammar::

    pipeline := [pass (',' pass)*]
    pass     := NAME ['{' [option (',' option)*] '}']
    option   := NAME '=' value
    value    := INT | FLOAT | 'true' | 'false' | WORD | '"' chars '"' | '[' [INT (',' INT)*] ']'

Whitespace between tokens is ignored. :func:`print_pipeline` writes the options that were
given explicitly (in text or to the constructor) or differ from their defaults, in field
order, with no spaces: ints in decimal, floats with
``repr``, bools ``true``/``false``, strings bare when they are a plain word (else quoted
with ``\\"`` and ``\\\\`` escapes), int tuples ``[1,2]``. Parsing printed text and printing
it again gives the same bytes.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from accy.errors import ParseError, known_names
from accy.passes.base import Pass, PassOption

__all__ = ["format_option_value", "parse_pipeline", "print_pass", "print_pipeline"]

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.\-]*")
_WORD = re.compile(r"[A-Za-z0-9_.+\-/:]+")
_INT = re.compile(r"[+-]?[0-9]+")
_PLAIN_STR = re.compile(r"[A-Za-z_][A-Za-z0-9_.\-/:]*")


def format_option_value(opt: PassOption, value: Any) -> str:
    """Pipeline text of one option value."""
    if opt.kind == "bool":
        return "true" if value else "false"
    if opt.kind == "int":
        return str(int(value))
    if opt.kind == "float":
        return repr(float(value))
    if opt.kind == "ints":
        return "[" + ",".join(str(int(v)) for v in value) + "]"
    text = str(value)
    if _PLAIN_STR.fullmatch(text) and text not in ("true", "false"):
        return text
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def print_pass(p: Pass) -> str:
    """``name{opt=value,...}``: the options given explicitly or differing from their
    defaults, in field order."""
    parts = []
    given = p.given_options
    for opt in type(p).options():
        value = getattr(p, opt.field_name)
        if opt.required or opt.field_name in given or value != opt.default:
            parts.append(f"{opt.text_name}={format_option_value(opt, value)}")
    return f"{p.name}{{{','.join(parts)}}}" if parts else p.name


def print_pipeline(passes: Iterable[Pass]) -> str:
    """The text of a pipeline; :func:`parse_pipeline` reads it back to equal passes."""
    return ",".join(print_pass(p) for p in passes)


class _Reader:
    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0

    def error(self, message: str, pos: int | None = None) -> ParseError:
        pos = self.pos if pos is None else pos
        line = self.text.count("\n", 0, pos) + 1
        start = self.text.rfind("\n", 0, pos) + 1
        end = self.text.find("\n", pos)
        source = self.text[start:] if end < 0 else self.text[start:end]
        return ParseError(f"pipeline: {message}", line, pos - start + 1, source)

    def skip_ws(self) -> None:
        while self.pos < len(self.text) and self.text[self.pos].isspace():
            self.pos += 1

    def peek(self) -> str:
        self.skip_ws()
        return self.text[self.pos] if self.pos < len(self.text) else ""

    def expect(self, ch: str, what: str) -> None:
        if self.peek() != ch:
            got = repr(self.text[self.pos]) if self.pos < len(self.text) else "end of text"
            raise self.error(f"expected '{ch}' {what}, got {got}")
        self.pos += 1

    def match(self, pattern: re.Pattern[str], what: str) -> tuple[str, int]:
        self.skip_ws()
        m = pattern.match(self.text, self.pos)
        if m is None:
            got = repr(self.text[self.pos]) if self.pos < len(self.text) else "end of text"
            raise self.error(f"expected {what}, got {got}")
        self.pos = m.end()
        return m.group(0), m.start()

    def quoted(self) -> str:
        start = self.pos
        self.pos += 1
        out = []
        while self.pos < len(self.text):
            ch = self.text[self.pos]
            if ch == '"':
                self.pos += 1
                return "".join(out)
            if ch == "\\" and self.pos + 1 < len(self.text):
                self.pos += 1
                ch = self.text[self.pos]
            out.append(ch)
            self.pos += 1
        raise self.error("unterminated string", start)


def _value(r: _Reader, pass_name: str, opt: PassOption) -> Any:
    """Read one option value of ``opt``'s kind."""
    start = (r.skip_ws(), r.pos)[1]
    if opt.kind == "ints":
        r.expect("[", f"to open the int list of option '{opt.text_name}'")
        items: list[int] = []
        while r.peek() != "]":
            if items:
                r.expect(",", "between list items")
            items.append(int(r.match(_INT, "an int")[0]))
        r.pos += 1
        return tuple(items)
    if r.peek() == '"':
        word = r.quoted()
    else:
        word = r.match(_WORD, f"a value for option '{opt.text_name}'")[0]
    bad = r.error(
        f"pass '{pass_name}': option '{opt.text_name}' expects {_expected(opt)}, got {word!r}",
        start,
    )
    if opt.kind == "int":
        if not _INT.fullmatch(word):
            raise bad
        return int(word)
    if opt.kind == "float":
        try:
            return float(word)
        except ValueError:
            raise bad from None
    if opt.kind == "bool":
        if word not in ("true", "false"):
            raise bad
        return word == "true"
    if opt.kind == "choice" and word not in opt.choices:
        raise bad
    return word


def _expected(opt: PassOption) -> str:
    if opt.kind == "choice":
        return "one of " + ", ".join(opt.choices)
    return {
        "int": "an int",
        "float": "a float",
        "bool": "true or false",
        "str": "a string",
        "ints": "a list of ints like [1,2]",
    }[opt.kind]


def _options(r: _Reader, cls: type[Pass]) -> dict[str, Any]:
    by_text = {o.text_name: o for o in cls.options()}
    values: dict[str, Any] = {}
    r.pos += 1  # '{'
    while r.peek() != "}":
        if values:
            r.expect(",", "between options")
        name, at = r.match(_NAME, f"an option name of pass '{cls.name}'")
        opt = by_text.get(name)
        if opt is None:
            known = ", ".join(o.describe() for o in cls.options()) or "none"
            raise r.error(f"pass '{cls.name}' has no option '{name}'; options: {known}", at)
        if opt.field_name in values:
            raise r.error(f"pass '{cls.name}': option '{name}' is given twice", at)
        r.expect("=", f"after option '{name}'")
        values[opt.field_name] = _value(r, cls.name, opt)
    r.pos += 1  # '}'
    return values


def parse_pipeline(text: str) -> list[Pass]:
    """Parse pipeline text into pass instances (empty text → no passes).

    Raises:
        ParseError: malformed text, an unknown pass (lists the known ones), an unknown
            option (lists the pass's options) or a value of the wrong type; the message
            carries the line and column.
    """
    from accy.passes.registry import find_pass_class, pass_names

    r = _Reader(text)
    passes: list[Pass] = []
    while r.peek():
        if passes:
            r.expect(",", "between passes")
        name, at = r.match(_NAME, "a pass name")
        cls = find_pass_class(name)
        if cls is None:
            raise r.error(f"unknown pass '{name}'; {known_names(pass_names(), name)}", at)
        values = _options(r, cls) if r.peek() == "{" else {}
        missing = [o.text_name for o in cls.options() if o.required and o.field_name not in values]
        if missing:
            raise r.error(f"pass '{name}': missing required option(s) {', '.join(missing)}", at)
        passes.append(cls(**values))
    return passes
