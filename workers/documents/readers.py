"""Readers that turn one file's bytes into text units, refusing what cannot be quizzed with a reason.

Every file is untrusted input: a reader never raises anything but ``UnreadableDocument`` for a
bad file (empty, binary, encrypted, scanned, corrupt), and says how it decoded odd text in notes.
PDF and Office files are parsed only in a confined child process (``sandbox``, ``reader_child``:
see ``pdf_sandbox`` and ``office_sandbox``).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from suture.workers.documents.errors import UnreadableDocument
from suture.workers.documents.pdf_sandbox import SandboxedPdf, open_pdf
from suture.workers.documents.section import Unit
from suture.workers.documents.text import file_format, text_problem

__all__ = ["SandboxedPdf", "TextDocument", "decode_text", "markdown_units", "open_pdf", "plain_units"]

_HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$")
_FENCE = re.compile(r"^\s*(```|~~~)")


@dataclass
class TextDocument:
    """Decoded text of a .md/.txt file, with how it was decoded."""

    text: str
    notes: list[str] = field(default_factory=list)


def decode_text(path: Path, data: bytes) -> TextDocument:
    """Decode bytes as UTF-8 (BOMs honoured); fall back to cp1252 then latin-1 with a note."""
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        return TextDocument(_decode_utf16(path, data), ["decoded as UTF-16 (byte-order mark)"])
    what = file_format(data[:64].decode("latin-1"))
    if what is not None:
        raise UnreadableDocument(
            path, "file_format", f"the file is {what}, not text; give it its own extension"
        )
    if b"\x00" in data[:65536]:
        raise UnreadableDocument(path, "binary", "contains NUL bytes: a binary file with a text extension")
    try:
        doc = TextDocument(data.decode("utf-8-sig"))
    except UnicodeDecodeError as exc:
        doc = _decode_fallback(data, exc)
    problem = text_problem(doc.text)
    if problem is not None and problem[0] != "empty":  # an empty text is the caller's "empty"
        raise UnreadableDocument(path, *problem)
    return doc


def _decode_utf16(path: Path, data: bytes) -> str:
    try:
        return data.decode("utf-16")
    except UnicodeDecodeError as exc:
        raise UnreadableDocument(
            path, "binary", f"UTF-16 byte-order mark but invalid UTF-16 ({exc.reason})"
        ) from exc


def _decode_fallback(data: bytes, error: UnicodeDecodeError) -> TextDocument:
    where = f"byte {error.start}"
    for encoding in ("cp1252", "latin-1"):
        try:
            text = data.decode(encoding)
        except UnicodeDecodeError:
            continue
        return TextDocument(text, [f"not valid UTF-8 (first bad {where}); decoded as {encoding}"])
    raise AssertionError("latin-1 decodes every byte string")  # pragma: no cover


def markdown_units(text: str) -> Iterator[Unit]:
    """Blocks of a markdown text, each opening at a heading (headings in code fences do not count)."""
    block: list[str] = []
    title: str | None = None
    level: int | None = None
    in_fence = False
    for line in text.splitlines():
        if _FENCE.match(line):
            in_fence = not in_fence
        heading = None if in_fence else _HEADING.match(line)
        if heading and block:
            yield Unit("\n".join(block), breaks=title is not None, title=title, level=level)
            block = []
        if heading:
            title, level = heading.group(2), len(heading.group(1))
        block.append(line)
    if block:
        yield Unit("\n".join(block), breaks=title is not None, title=title, level=level)


def plain_units(text: str) -> Iterator[Unit]:
    """Paragraphs of a plain text; none of them forces a break."""
    for paragraph in re.split(r"\n\s*\n", text):
        if paragraph.strip():
            yield Unit(paragraph.strip())
