"""Word (.docx) and PowerPoint (.pptx) files as text units: headings and slides open sections.

A .docx is read in body order, paragraphs and tables alike; a paragraph in a heading style (or the
Title style) opens a unit titled with its text, as a markdown heading does. A .pptx gives one unit
per slide, titled with the slide's title, holding the slide's text and its speaker notes; the
unit's ``page`` is the slide number. A file python-docx or python-pptx cannot open (corrupt,
encrypted, not really Office) raises ``UnreadableDocument``, never anything else. These readers run
only in the confined child process (``office_sandbox``), never in the process that asked.
"""

from __future__ import annotations

import re
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import docx
import pptx
from docx.opc.exceptions import PackageNotFoundError as DocxPackageError
from docx.table import Table
from docx.text.paragraph import Paragraph
from lxml.etree import LxmlError
from pptx.exc import PackageNotFoundError as PptxPackageError

from suture.workers.documents.errors import UnreadableDocument
from suture.workers.documents.section import Unit, heading_units

# Style ids are not translated ("Heading1" also in a German file whose style *name* is "Überschrift 1").
# Word derives ids from the localized names with non-ASCII letters dropped ("Título 1" -> "Ttulo1").
_HEADING_STYLE = re.compile(r"^(?:heading|berschrift|titre|titolo|ttulo|kop|nagwek)\s*\d$", re.IGNORECASE)
_OPEN_ERRORS = (
    DocxPackageError,
    PptxPackageError,
    zipfile.BadZipFile,
    KeyError,
    ValueError,
    LxmlError,
    OSError,
    AttributeError,
    TypeError,
)


def docx_units(path: Path) -> Iterator[Unit]:
    """The blocks of a Word file, each opening at a heading, with tables as ``a | b | c`` lines."""
    document = _open(path, docx.Document, "Word")
    try:
        yield from heading_units(_docx_blocks(document))
    except _OPEN_ERRORS as exc:
        raise UnreadableDocument(path, "unreadable", f"not a readable Word file ({_name(exc)})") from exc


def _docx_blocks(document: Any) -> Iterator[tuple[int | None, str]]:
    """(heading level or None, text) of the body's paragraphs and tables with text, in order."""
    for item in document.iter_inner_content():
        text = _table_text(item) if isinstance(item, Table) else item.text.strip()
        if text:
            yield (_heading_level(item) if isinstance(item, Paragraph) else None), text


def pptx_units(path: Path) -> Iterator[Unit]:
    """One unit per slide with text: its title, the text of its shapes, then its speaker notes."""
    deck = _open(path, pptx.Presentation, "PowerPoint")
    try:
        for number, slide in enumerate(deck.slides, start=1):
            title, lines = _slide_text(slide)
            if lines:
                yield Unit("\n".join(lines), page=number, breaks=True, title=title, level=1)
    except _OPEN_ERRORS as exc:
        raise UnreadableDocument(
            path, "unreadable", f"not a readable PowerPoint file ({_name(exc)})"
        ) from exc


def _open(path: Path, opener: Any, kind: str) -> Any:
    if not zipfile.is_zipfile(path):
        raise UnreadableDocument(
            path, "unreadable", f"not a {kind} file (not a zip package; an old .doc/.ppt?)"
        )
    try:
        return opener(str(path))
    except _OPEN_ERRORS as exc:
        raise UnreadableDocument(path, "unreadable", f"not a readable {kind} file ({_name(exc)})") from exc


def _heading_level(paragraph: Paragraph) -> int | None:
    """0 for the Title style, N for a style "Heading N" (or one based on it), None for body text."""
    style = paragraph.style
    while style is not None:
        if style.style_id == "Title" or style.name == "Title":
            return 0
        for name in (style.style_id or "", style.name or ""):
            if _HEADING_STYLE.match(name) or name.startswith("Heading "):
                return int(name[-1]) if name[-1].isdigit() else 1
        style = style.base_style
    return None


def _table_text(table: Table) -> str:
    rows = []
    for row in table.rows:
        cells = [" ".join(cell.text.split()) for cell in row.cells]
        # Merged cells repeat their text once per grid column; keep each run once.
        kept = [c for i, c in enumerate(cells) if c and (i == 0 or c != cells[i - 1])]
        if kept:
            rows.append(" | ".join(kept))
    return "\n".join(rows)


def _slide_text(slide: Any) -> tuple[str | None, list[str]]:
    title_shape = slide.shapes.title
    # shapes.title is a new proxy on each access: compare shape ids, never identity.
    title_id = title_shape.shape_id if title_shape is not None else None
    title = " ".join(title_shape.text_frame.text.split()) if title_shape is not None else ""
    lines = [title] if title else []
    for shape in slide.shapes:
        if shape.shape_id == title_id:
            continue
        lines += _shape_lines(shape)
    if slide.has_notes_slide:
        notes = slide.notes_slide.notes_text_frame
        lines += [p.text.strip() for p in (notes.paragraphs if notes is not None else []) if p.text.strip()]
    return title or None, lines


def _shape_lines(shape: Any) -> list[str]:
    if getattr(shape, "has_text_frame", False) and shape.has_text_frame:
        return [p.text.strip() for p in shape.text_frame.paragraphs if p.text.strip()]
    if getattr(shape, "has_table", False) and shape.has_table:
        return [" | ".join(c.text.strip() for c in row.cells if c.text.strip()) for row in shape.table.rows]
    if getattr(shape, "shapes", None) is not None:  # a group: its shapes, in order
        return [line for inner in shape.shapes for line in _shape_lines(inner)]
    return []


def _name(exc: BaseException) -> str:
    text = " ".join(str(exc).split())[:120]
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
