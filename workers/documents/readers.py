"""Readers that turn one file's bytes into text units, refusing what cannot be quizzed with a reason.

Every file is untrusted input: a reader never raises anything but ``UnreadableDocument`` for a
bad file (empty, binary, encrypted, scanned, corrupt), and says how it decoded odd text in notes.
"""

from __future__ import annotations

import logging
import re
import warnings
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from pypdf import PdfReader
from pypdf.errors import DependencyError, PyPdfError

from workers.documents.errors import UnreadableDocument
from workers.documents.section import Unit

_HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$")
_FENCE = re.compile(r"^\s*(```|~~~)")
# Control characters other than tab, newline, carriage return and form feed mark a binary file.
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0e-\x1f\x7f]")
_MAX_CONTROL_SHARE = 0.02
# pypdf raises many exception types on malformed files; all of them mean "this PDF is unreadable".
_PDF_ERRORS = (PyPdfError, ValueError, LookupError, TypeError, AttributeError, OSError, RecursionError)
# pypdf logs its complaints about malformed files; our skip line already says why, so keep them off
# stderr unless the application configured logging itself.
logging.getLogger("pypdf").addHandler(logging.NullHandler())


@dataclass
class TextDocument:
    """Decoded text of a .md/.txt file, with how it was decoded."""

    text: str
    notes: list[str] = field(default_factory=list)


def decode_text(path: Path, data: bytes) -> TextDocument:
    """Decode bytes as UTF-8 (BOMs honoured); fall back to cp1252 then latin-1 with a note."""
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        return TextDocument(_decode_utf16(path, data), ["decoded as UTF-16 (byte-order mark)"])
    if b"\x00" in data[:65536]:
        raise UnreadableDocument(path, "binary", "contains NUL bytes: a binary file with a text extension")
    try:
        doc = TextDocument(data.decode("utf-8-sig"))
    except UnicodeDecodeError as exc:
        doc = _decode_fallback(data, exc)
    if _looks_binary(doc.text):
        raise UnreadableDocument(path, "binary", "mostly control characters: not a text file")
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


def _looks_binary(text: str) -> bool:
    sample = text[:65536]
    return bool(sample) and len(_CONTROL.findall(sample)) / len(sample) > _MAX_CONTROL_SHARE


def markdown_units(text: str) -> Iterator[Unit]:
    """Blocks of a markdown text, each opening at a heading (headings in code fences do not count)."""
    block: list[str] = []
    title: str | None = None
    in_fence = False
    for line in text.splitlines():
        if _FENCE.match(line):
            in_fence = not in_fence
        heading = None if in_fence else _HEADING.match(line)
        if heading and block:
            yield Unit("\n".join(block), breaks=title is not None, title=title)
            block = []
        if heading:
            title = heading.group(2)
        block.append(line)
    if block:
        yield Unit("\n".join(block), breaks=title is not None, title=title)


def plain_units(text: str) -> Iterator[Unit]:
    """Paragraphs of a plain text; none of them forces a break."""
    for paragraph in re.split(r"\n\s*\n", text):
        if paragraph.strip():
            yield Unit(paragraph.strip())


@dataclass
class PdfDocument:
    """An opened, readable PDF: its page count and a lazy stream of page units."""

    path: Path
    reader: PdfReader
    notes: list[str] = field(default_factory=list)
    empty_pages: int = 0

    @property
    def page_count(self) -> int:
        return len(self.reader.pages)

    def units(self) -> Iterator[Unit]:
        """One unit per page with text; pages are extracted one at a time to bound memory."""
        for number in range(1, self.page_count + 1):
            text = self._page_text(number)
            if text.strip():
                yield Unit(text, page=number, breaks=True)
            else:
                self.empty_pages += 1

    def _page_text(self, number: int) -> str:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # pypdf warns about sloppy-but-readable files
                return self.reader.pages[number - 1].extract_text() or ""
        except _PDF_ERRORS as exc:
            self.notes.append(f"page {number} unreadable ({type(exc).__name__}); skipped")
            return ""


def open_pdf(path: Path) -> PdfDocument:
    """Open a PDF for text extraction; encrypted or corrupt files raise ``UnreadableDocument``."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            reader = PdfReader(path)
            doc = PdfDocument(path, reader)
            if reader.is_encrypted:
                _decrypt(path, reader, doc)
            if doc.page_count == 0:
                raise UnreadableDocument(path, "empty", "PDF has no pages")
    except UnreadableDocument:
        raise
    except _PDF_ERRORS as exc:
        raise UnreadableDocument(
            path, "unreadable", f"not a readable PDF ({type(exc).__name__}: {exc})"
        ) from exc
    return doc


def _decrypt(path: Path, reader: PdfReader, doc: PdfDocument) -> None:
    """Open a PDF encrypted with an empty user password (common for "no copy" PDFs); refuse others."""
    try:
        opened = reader.decrypt("")
    except DependencyError as exc:
        raise UnreadableDocument(path, "encrypted", f"encrypted PDF; cannot decrypt here ({exc})") from exc
    if not opened:
        raise UnreadableDocument(path, "encrypted", "encrypted PDF with a password; decrypt it first")
    doc.notes.append("encrypted PDF opened with an empty password")
