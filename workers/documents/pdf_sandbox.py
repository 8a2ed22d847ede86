"""A PDF read in a confined child process (``sandbox``), its pages and outline streamed back.

pypdf parses whatever a file says: a 72 KB page can inflate to a content stream that takes 20 s and
a gigabyte to tokenise. So ``open_pdf(path, limits)`` reads it in a ``ReaderProcess`` (standard
library and pypdf only in the child) that streams the pages back one at a time; a page over a limit
refuses the file as ``UnreadableDocument(reason="unreadable")`` naming the limit and its setting.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from suture.config.limit_settings import ReaderLimits
from suture.workers.documents.pdf_structure import Mark, structured_units
from suture.workers.documents.sandbox import ReaderProcess
from suture.workers.documents.section import Unit


class SandboxedPdf(ReaderProcess):
    """An opened PDF whose pages come from a confined child process, one page at a time."""

    def __init__(self, path: Path, limits: ReaderLimits, *, outline: bool = False) -> None:
        super().__init__(path, limits, "pdf", outline=outline)
        self.notes: list[str] = []
        self.empty_pages = 0
        try:
            opened = self._next()
        except BaseException:
            self.close()
            raise
        self.page_count = int(opened["pages"])
        self.notes += opened.get("notes", [])

    def outline(self) -> list[Mark]:
        """The bookmarks of the two top outline levels, in page order (asked for at open)."""
        self._step = "the outline"
        record = self._next()
        if record.get("note"):
            self.notes.append(f"{record['note']}; sections follow headings")
        marks = [
            Mark(page=int(mark[0]), title=str(mark[1]), level=int(mark[2]) + 1 if len(mark) > 2 else 1)
            for mark in record.get("marks", [])
        ]
        return sorted(marks, key=lambda m: m.page)  # stable: same page keeps outline order

    def units(self) -> Iterator[Unit]:
        """One unit per page with text, as the child extracts them; the child is stopped at the end."""
        try:
            for number in range(1, self.page_count + 1):
                self._step = f"page {number}"
                record = self._next()
                if record.get("note"):
                    self.notes.append(str(record["note"]))
                text = str(record.get("text", ""))
                if text.strip():
                    yield Unit(text, page=number, breaks=True)
                else:
                    self.empty_pages += 1
        finally:
            self.close()

    def section_units(self) -> Iterator[Unit]:
        """Page text cut where sections begin: at the outline's bookmarks, else at headings, else pages."""
        marks = self.outline()
        pages = ((unit.page or 0, unit.text) for unit in self.units())
        return structured_units(pages, marks)


def open_pdf(path: Path, limits: ReaderLimits, *, outline: bool = False) -> SandboxedPdf:
    """Open a PDF in a confined reader; ``outline=True`` to read its bookmarks (for ``section_units``)."""
    return SandboxedPdf(path, limits, outline=outline)
