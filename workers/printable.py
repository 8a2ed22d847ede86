"""User text (file names, section titles) as the CLI prints it: one line that nothing can forge.

A file name may hold a newline, a carriage return, a terminal escape sequence or a Unicode line
separator; printed raw it could forge a line of suture's output (``shadow.md: 1 section(s)``) or
drive the terminal. ``shown(text)`` leaves ordinary text as it is and prints any other ``repr``-style:
quoted, with every such character escaped (``'a\\nb.md'``).
"""

from __future__ import annotations

from pathlib import PurePath


def shown(text: str | PurePath | None) -> str:
    """``text`` as is when it is plain printable text, else its ``repr`` (quoted, escaped)."""
    value = "" if text is None else str(text)
    plain = value.isprintable() and "\\" not in value and not value.startswith(("'", '"'))
    return value if plain else repr(value)
