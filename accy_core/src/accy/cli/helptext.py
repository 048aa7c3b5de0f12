"""Plain ``--help`` text from reST docstrings: the commands' docs double as their help.

``plain(__doc__)`` drops inline markup (````x```` → ``x``, ``:class:`~a.B``` → ``B``) and turns
a literal-block marker (``Examples::``) into a colon, so a terminal shows no reST.
"""

from __future__ import annotations

import re

__all__ = ["plain"]

_ROLE = re.compile(r":[a-z]+:`~?([^`<]*?)(?:\s*<[^>]*>)?`")
_LITERAL = re.compile(r"``([^`]+)``")
_TITLE = re.compile(r"`([^`]+)`")


def plain(doc: str | None) -> str:
    """Return ``doc`` without reST inline markup or ``::`` literal-block markers."""
    text = doc or ""

    def role(m: re.Match[str]) -> str:
        target = m.group(1)
        return target.rsplit(".", 1)[-1] if m.group(0).split("`")[1].startswith("~") \
            else target

    text = _ROLE.sub(role, text)
    text = _LITERAL.sub(r"\1", text)
    text = _TITLE.sub(r"\1", text)
    return re.sub(r"(\S)::$", r"\1:", text, flags=re.MULTILINE)
