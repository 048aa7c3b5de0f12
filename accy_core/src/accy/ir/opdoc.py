"""The op reference of ``docs/ir.md``, generated from the op registry so that it cannot go stale.

:func:`op_reference` renders every op accy itself registers (namespaces ``arith``,
``tensor``, ``reduce``, ``math``, ``nn``, ``linalg``, ``library``, ``dispatch``, ``func``),
one section per namespace: the namespace module's docstring (semantics and examples,
converted from reST to Markdown), then a table of its ops with operand count, attributes
(required ``name: kind``; optional ``name: kind = default``, written as in the text IR),
traits and summary.

``python -m accy.ir.opdoc docs/ir.md`` rewrites the part of that file between
:data:`BEGIN` and :data:`END`; ``--check`` exits 1 when it is out of date (the test suite
runs the same comparison).
"""

from __future__ import annotations

import importlib
import re
import sys
from pathlib import Path

from accy.ir.ops.registry import get_op_def, op_names
from accy.ir.printer import format_attr

__all__ = ["BEGIN", "END", "NAMESPACES", "op_reference", "update_file"]

BEGIN = "<!-- op-reference:begin (generated: python -m accy.ir.opdoc docs/ir.md) -->"
END = "<!-- op-reference:end -->"

#: namespace → module of accy.ir.ops whose docstring describes it, in reading order
NAMESPACES = {"arith": "arith", "math": "math", "tensor": "tensor", "reduce": "reduce",
              "nn": "nn", "linalg": "linalg", "library": "library", "dispatch": "dispatch",
              "func": "func"}

_KIND = {"int": "int", "float": "float", "bool": "bool", "str": "string", "ints": "[int, ...]",
         "type": "type", "dense": "dense<...>", "dtype": "dtype"}


def _markdown(doc: str) -> str:
    """reST docstring → Markdown: ``x`` → `x`, ``Example::`` + indented block → fence."""
    out: list[str] = []
    lines = doc.strip("\n").splitlines()
    i = 0
    while i < len(lines):
        line = re.sub(r"``([^`]+)``", r"`\1`", lines[i])
        if line.rstrip().endswith("::"):
            text = line.rstrip()[:-2].rstrip()
            out.append(text + ":" if text and not text.endswith(":") else text)
            i += 1
            block: list[str] = []
            while i < len(lines) and (not lines[i].strip() or lines[i].startswith("    ")):
                block.append(lines[i][4:])
                i += 1
            while block and not block[-1].strip():
                block.pop()
            while block and not block[0].strip():
                block.pop(0)
            out += ["", "```", *block, "```", ""]
            continue
        out.append(line)
        i += 1
    return "\n".join(out).strip() + "\n"


def _attrs(name: str) -> str:
    d = get_op_def(name)
    items = [f"`{a}: {_KIND.get(k, k)}`" for a, k in d.attrs.items()]
    items += [f"`{a}: {_KIND.get(k, k)} = {format_attr(v)}`"
              for a, (k, v) in d.optional_attrs.items()]
    return ", ".join(items) or "—"


def _row(name: str) -> str:
    d = get_op_def(name)
    operands = "any number" if d.num_operands is None else str(d.num_operands)
    traits = ", ".join(sorted(d.traits - {"pure"})) or "—"
    summary = d.summary.replace("|", "\\|")
    return f"| `{name}` | {operands} | {_attrs(name)} | {traits} | {summary} |"


def op_reference() -> str:
    """The Markdown op reference (every op of :data:`NAMESPACES`; see the module docstring)."""
    parts = []
    names = op_names()
    for ns, module in NAMESPACES.items():
        doc = importlib.import_module(f"accy.ir.ops.{module}").__doc__ or ""
        ops = [n for n in names if n.split(".", 1)[0] == ns]
        table = ["| op | operands | attributes | traits | summary |",
                 "|---|---|---|---|---|", *(_row(n) for n in ops)]
        parts.append(f"### `{ns}`\n\n{_markdown(doc)}\n" + "\n".join(table) + "\n")
    return "\n".join(parts)


def update_file(path: str | Path, check: bool = False) -> bool:
    """Rewrite the generated part of ``path``; return True when it was already current.

    Raises:
        ValueError: the file lacks the :data:`BEGIN` / :data:`END` markers.
    """
    p = Path(path)
    text = p.read_text()
    if BEGIN not in text or END not in text:
        raise ValueError(f"{path}: no '{BEGIN}' ... '{END}' markers")
    head, rest = text.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    new = f"{head}{BEGIN}\n\n{op_reference()}\n{END}{tail}"
    if new == text:
        return True
    if not check:
        p.write_text(new)
    return False


def _main(argv: list[str]) -> int:
    check = "--check" in argv
    paths = [a for a in argv if a != "--check"] or ["docs/ir.md"]
    stale = [p for p in paths if not update_file(p, check=check)]
    for p in stale:
        print(f"{p}: {'out of date' if check else 'updated'}", file=sys.stderr)
    return 1 if check and stale else 0


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
