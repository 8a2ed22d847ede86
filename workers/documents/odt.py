"""OpenDocument text (.odt, LibreOffice's own format) as text units: its headings open sections.

Read with odfpy (the OASIS reference library for Python): the body's headings (``text:h`` with their
``outline-level``), paragraphs, lists and tables in order; a heading opens a unit titled with its
text, as a Word heading does. A file odfpy cannot open (corrupt, not really OpenDocument) raises
``UnreadableDocument``, never anything else. It runs only in the confined child process
(``office_sandbox``), never in the process that asked.
"""

from __future__ import annotations

import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from odf import teletype
from odf.opendocument import load
from odf.table import TableRow

from suture.workers.documents.errors import UnreadableDocument
from suture.workers.documents.section import Unit, heading_units

_TEXT_NS = "urn:oasis:names:tc:opendocument:xmlns:text:1.0"
_TABLE_NS = "urn:oasis:names:tc:opendocument:xmlns:table:1.0"
_OPEN_ERRORS = (zipfile.BadZipFile, KeyError, ValueError, AttributeError, TypeError, OSError, IndexError)


def odt_units(path: Path) -> Iterator[Unit]:
    """The blocks of an OpenDocument text, each opening at a heading, tables as ``a | b`` lines."""
    if not zipfile.is_zipfile(path):
        raise UnreadableDocument(path, "unreadable", "not an OpenDocument file (not a zip package)")
    try:
        body = load(str(path)).text
        yield from heading_units(_blocks(body))
    except _OPEN_ERRORS as exc:
        detail = (
            f"not a readable OpenDocument text ({type(exc).__name__}: {' '.join(str(exc).split())[:120]})"
        )
        raise UnreadableDocument(path, "unreadable", detail) from exc


def _blocks(node: Any) -> Iterator[tuple[int | None, str]]:
    """(heading level or None, text) of the body's blocks in order, lists and sections walked into."""
    for child in node.childNodes:
        qname = getattr(child, "qname", None)
        if qname == (_TEXT_NS, "h"):
            text = " ".join(teletype.extractText(child).split())
            if text:
                yield _level(child), text
        elif qname == (_TEXT_NS, "p"):
            text = " ".join(teletype.extractText(child).split())
            if text:
                yield None, text
        elif qname == (_TABLE_NS, "table"):
            yield from ((None, row) for row in _table_rows(child))
        elif qname is not None and getattr(child, "childNodes", None):
            yield from _blocks(child)  # text:list, text:section, list items


def _level(heading: Any) -> int:
    raw = heading.getAttribute("outlinelevel")
    return int(raw) if raw and str(raw).isdigit() else 1


def _table_rows(table: Any) -> Iterator[str]:
    for row in table.getElementsByType(TableRow):
        cells = [" ".join(teletype.extractText(cell).split()) for cell in row.childNodes]
        kept = [c for c in cells if c]
        if kept:
            yield " | ".join(kept)
