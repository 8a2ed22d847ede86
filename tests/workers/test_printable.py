"""User text printed by the CLI: plain names as they are, any other repr-style on one line."""

from __future__ import annotations

from pathlib import Path

import pytest

from suture.workers.printable import shown


@pytest.mark.parametrize("name", ["notes.md", "course/Chapitre 2 – été.pdf", "a b.docx", ""])
def test_a_plain_name_is_printed_as_it_is(name: str) -> None:
    assert shown(name) == name


@pytest.mark.parametrize(
    "name",
    [
        "x.md\nshadow.md: 1 section(s)",
        "y.md\rskipped",
        "z\x1b[2J.md",
        "tab\there.md",
        "line\u2028sep.md",
        "nel\x85.md",
        "back\\slash.md",
        "'quoted'.md",
    ],
)
def test_any_other_is_printed_repr_style_on_one_line(name: str) -> None:
    printed = shown(Path(name) if "/" not in name else name)
    assert printed == repr(name)
    assert printed.isprintable()
