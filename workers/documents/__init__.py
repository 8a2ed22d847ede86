"""Course documents in, quiz sections out: walk inputs, read .pdf/.md/.txt/.docx/.pptx, skip bad files.

``iter_documents(inputs, settings.batch)`` streams ``Section`` (one quiz each) and ``InputIssue``
(a file skipped, or a note about how it was read) in input order (files as given, folders walked in
sorted order), so a batch never holds a whole corpus in memory. Every file met is accounted for: a
file in a folder that is not a course document is an issue too ("unsupported"), never silently
dropped. ``document_text(path, settings.batch)`` is the whole text of one document as a batch reads
it (for ``suture validate --source``). Errors: see ``suture.workers.documents.errors``.

Sections follow the document's own outline: headings (markdown, Word heading styles), slides
(PowerPoint: one slide, one section, titled by the slide title; pages are slide numbers) and, in a
PDF, its outline's bookmarks, else headings found in its text, else pages (titled "Pages 3-4", only
for a PDF with neither). A section too short for a quiz is joined to its neighbour under the same
parent heading and named after what it covers ("6.1–6.4 Externalities", "Slides 3–5: Supply
shocks"); see ``suture.workers.documents.section``. Titles are plain text (no Markdown marks).
"""

from __future__ import annotations

import hashlib
import os
import stat
import tempfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from suture.config.settings import BatchSettings
from suture.workers.documents.errors import DocumentError, InputNotFound, UnreadableDocument
from suture.workers.documents.ocr import OCR_INSTALL, missing_ocr_tools, ocr_copy
from suture.workers.documents.office_sandbox import OFFICE_READERS, office_units
from suture.workers.documents.packing import pack_sections
from suture.workers.documents.readers import SandboxedPdf, decode_text, markdown_units, open_pdf, plain_units
from suture.workers.documents.section import Section, Unit
from suture.workers.documents.text import text_problem
from suture.workers.printable import shown

__all__ = [
    "SUFFIXES",
    "DocumentError",
    "InputIssue",
    "InputNotFound",
    "Section",
    "UnreadableDocument",
    "document_text",
    "find_files",
    "iter_documents",
    "read_document",
]

SUFFIXES: frozenset[str] = frozenset({".pdf", ".md", ".markdown", ".txt", ".docx", ".pptx", ".odt"})


@dataclass(frozen=True)
class InputIssue:
    """A line for the report about one input file: skipped (with a reason code) or just a note."""

    source: str
    reason: str
    detail: str
    skipped: bool = True

    def describe(self) -> dict[str, Any]:
        return {"file": self.source, "reason": self.reason, "detail": self.detail, "skipped": self.skipped}

    def __str__(self) -> str:
        verb = "skipped" if self.skipped else "note"
        return f"{shown(self.source)}: {verb}: {self.reason}: {shown(self.detail)}"


def find_files(inputs: Iterable[str | Path], *, follow_symlinks: bool = False) -> Iterator[Path | InputIssue]:
    """Expand inputs: files as given, folders walked in sorted order (hidden files and folders aside).

    Files of any suffix are yielded, so an unsupported one is reported rather than ignored. A symbolic
    link is never followed inside a folder (file or folder, it is an issue "symlink"): a link in an
    unpacked archive must not carry ``~/secret.env`` to the model. A link named as an input is followed
    only with ``follow_symlinks`` (the CLI's ``--follow-symlinks``).
    """
    for raw in inputs:
        path = Path(raw)
        if path.is_symlink() and not follow_symlinks:
            yield _symlink_issue(path, named=True)
            continue
        if not path.exists():
            raise InputNotFound(path)
        if path.is_dir():
            yield from _walk(path)
        else:
            yield path


def _walk(folder: Path) -> Iterator[Path | InputIssue]:
    for root, dirs, files in os.walk(folder):  # followlinks=False: a linked folder is listed, not entered
        kept = []
        for name in sorted(d for d in dirs if not d.startswith(".")):
            if (Path(root) / name).is_symlink():
                yield _symlink_issue(Path(root) / name, named=False)
            else:
                kept.append(name)
        dirs[:] = kept
        for name in sorted(files):
            if not name.startswith("."):
                path = Path(root) / name
                yield _symlink_issue(path, named=False) if path.is_symlink() else path


def _symlink_issue(path: Path, *, named: bool) -> InputIssue:
    how = "name it with --follow-symlinks to read it" if named else "links inside folders are never followed"
    return InputIssue(_display_link(path), "symlink", f"a symbolic link; not followed ({how})")


def _display_link(path: Path) -> str:
    """The link's own path (never its target's) as the user will recognise it."""
    try:
        return path.absolute().relative_to(Path.cwd().resolve()).as_posix()
    except ValueError:
        return path.as_posix()


def iter_documents(
    inputs: Iterable[str | Path], limits: BatchSettings, *, follow_symlinks: bool = False
) -> Iterator[Section | InputIssue]:
    """Every section of every input document, and an issue line for each file skipped or noted."""
    seen: dict[str, str] = {}
    for path in find_files(inputs, follow_symlinks=follow_symlinks):
        if isinstance(path, InputIssue):
            yield path
            continue
        source = _display(path)
        try:
            yield from _document(path, source, seen, limits)
        except UnreadableDocument as exc:
            yield InputIssue(source, exc.reason, exc.detail)


def read_document(path: Path, limits: BatchSettings) -> str:
    """One whole document's text (every page of a PDF), for a single job; raises UnreadableDocument.

    The same readers and limits as ``iter_documents`` (size, encoding, binary, encrypted, scanned,
    too short), without cutting the text into sections.
    """
    suffix = path.suffix.lower()
    if suffix not in SUFFIXES:
        raise UnreadableDocument(path, "unsupported", f"'{suffix or path.name}' is not .pdf, .md or .txt")
    data = _read_bytes(path, limits)
    if suffix == ".pdf":
        del data
        text = "\n\n".join(unit.text for unit in open_pdf(path, limits.reader).units())
        if not text.strip():
            raise UnreadableDocument(path, "no_text", f"no extractable text (a scanned PDF? {_ocr_hint()})")
    else:
        text = decode_text(path, data).text
    _require_text(path, len(text.strip()), limits)
    return text


def _display(path: Path) -> str:
    """The path as the user will recognise it: relative to the working directory when inside it."""
    try:
        return path.resolve().relative_to(Path.cwd().resolve()).as_posix()
    except ValueError:
        return path.as_posix()


def _document(
    path: Path, source: str, seen: dict[str, str], limits: BatchSettings
) -> Iterator[Section | InputIssue]:
    suffix = _supported(path)
    data = _read_bytes(path, limits)
    digest = hashlib.sha256(data).hexdigest()
    if digest in seen:
        raise UnreadableDocument(path, "duplicate", f"same content as {seen[digest]}")
    seen[digest] = source
    if suffix == ".pdf":
        del data  # pypdf reads the file itself, page by page
        yield from _pdf_sections(path, source, limits)
    elif suffix in OFFICE_READERS:
        del data
        yield from _office_sections(path, source, limits)
    else:
        yield from _text_sections(path, source, data, limits)


def _supported(path: Path) -> str:
    suffix = path.suffix.lower()
    if suffix not in SUFFIXES:
        kinds = ", ".join(sorted(SUFFIXES - {".markdown"}))
        raise UnreadableDocument(path, "unsupported", f"'{suffix or path.name}' is not one of {kinds}")
    return suffix


def document_text(path: str | Path, limits: BatchSettings) -> str:
    """The whole text of one document as a batch reads it; ``UnreadableDocument`` if it cannot be read."""
    path = Path(path)
    if not path.is_file():
        raise InputNotFound(path)
    suffix = _supported(path)
    if suffix == ".pdf":
        units: Iterable[Unit] = open_pdf(path, limits.reader).units()
    elif suffix in OFFICE_READERS:
        units = office_units(path, limits.reader)
    else:
        units = [Unit(decode_text(path, _read_bytes(path, limits)).text)]
    text = "\n\n".join(unit.text for unit in units).strip()
    if not text:
        raise UnreadableDocument(path, "no_text", "no extractable text")
    return text


def _office_sections(path: Path, source: str, limits: BatchSettings) -> Iterator[Section | InputIssue]:
    slides = path.suffix.lower() == ".pptx"
    units = list(office_units(path, limits.reader))
    _require_text(path, sum(len(unit.text.strip()) for unit in units), limits)
    yield from _bounded(source, units, limits, total_pages=None, unit_name="Slide" if slides else None)


def _read_bytes(path: Path, limits: BatchSettings) -> bytes:
    try:
        info = path.stat()
        if not stat.S_ISREG(info.st_mode):  # a FIFO or device would block or never end
            raise UnreadableDocument(path, "unreadable", "not a regular file (a FIFO, device or socket)")
        size_b = info.st_size
        if size_b > limits.max_file_mb * 1024 * 1024:
            detail = f"{size_b / 1024 / 1024:.1f} MB is over batch.max_file_mb={limits.max_file_mb:g}"
            raise UnreadableDocument(path, "too_large", detail)
        data = path.read_bytes()
    except OSError as exc:
        raise UnreadableDocument(path, "unreadable", exc.strerror or str(exc)) from exc
    if not data.strip():
        raise UnreadableDocument(path, "empty", "the file is empty")
    return data


def _text_sections(
    path: Path, source: str, data: bytes, limits: BatchSettings
) -> Iterator[Section | InputIssue]:
    doc = decode_text(path, data)
    for note in doc.notes:
        yield InputIssue(source, "encoding", note, skipped=False)
    _require_text(path, len(doc.text.strip()), limits)
    units = markdown_units(doc.text) if path.suffix.lower() in (".md", ".markdown") else plain_units(doc.text)
    yield from _bounded(source, units, limits, total_pages=None)


def _pdf_sections(path: Path, source: str, limits: BatchSettings) -> Iterator[Section | InputIssue]:
    try:
        with open_pdf(path, limits.reader, outline=True) as pdf:  # the reader stops when the caller does
            yield from _pdf_items(path, source, limits, pdf)
    except UnreadableDocument as exc:
        if exc.reason != "no_text" or missing_ocr_tools():
            raise
        yield from _ocr_sections(path, source, limits)


def _ocr_sections(path: Path, source: str, limits: BatchSettings) -> Iterator[Section | InputIssue]:
    """A scanned PDF read again from a copy with an OCR text layer (``ocr``); the same sections else."""
    with tempfile.TemporaryDirectory(prefix="suture-ocr-") as folder:
        copy = ocr_copy(path, Path(folder), limits.reader.cpu_s * 10)
        if copy is None:
            raise UnreadableDocument(path, "no_text", "no extractable text, and OCR (ocrmypdf) failed on it")
        yield InputIssue(source, "pdf", "no text layer: read by OCR (ocrmypdf, Tesseract)", skipped=False)
        with open_pdf(copy, limits.reader, outline=True) as pdf:
            yield from _pdf_items(path, source, limits, pdf)


def _pdf_items(
    path: Path, source: str, limits: BatchSettings, pdf: SandboxedPdf
) -> Iterator[Section | InputIssue]:
    items = (
        _titled(item) for item in _bounded(source, pdf.section_units(), limits, total_pages=pdf.page_count)
    )
    first = next(items, None)  # extracts pages only until the first section is complete
    if first is None:
        raise UnreadableDocument(path, "no_text", f"no extractable text (a scanned PDF? {_ocr_hint()})")
    second = next(items, None)
    if second is None and isinstance(first, Section):
        _require_text(path, len(first.text), limits)
    yield first
    if second is not None:
        yield second
    yield from items
    for note in pdf.notes:
        yield InputIssue(source, "pdf", note, skipped=False)
    if pdf.empty_pages:
        detail = (
            f"{pdf.empty_pages} page(s) without extractable text, not quizzed (image-only? {OCR_INSTALL})"
        )
        yield InputIssue(source, "pdf", detail, skipped=False)


def _ocr_hint() -> str:
    """What to install for OCR, or that OCR is there (a scanned file it could not help with)."""
    missing = missing_ocr_tools()
    return f"{OCR_INSTALL}; missing: {', '.join(missing)}" if missing else "OCR found no text either"


def _titled(item: Section | InputIssue) -> Section | InputIssue:
    """A PDF section with no heading of its own is named by its pages."""
    if not isinstance(item, Section) or item.title or item.page_start is None:
        return item
    pages = (
        f"Page {item.page_start}"
        if item.page_start == item.page_end
        else f"Pages {item.page_start}-{item.page_end}"
    )
    return replace(item, title=pages)


def _require_text(path: Path, chars: int, limits: BatchSettings) -> None:
    if chars == 0:
        raise UnreadableDocument(path, "empty", "no text after decoding")
    if chars < limits.min_document_chars:
        detail = f"{chars} characters is under batch.min_document_chars={limits.min_document_chars}"
        raise UnreadableDocument(path, "too_short", detail)


def _bounded(
    source: str,
    units: Iterable[Unit],
    limits: BatchSettings,
    *,
    total_pages: int | None,
    unit_name: str | None = None,
) -> Iterator[Section | InputIssue]:
    """Sections of one document, at most ``max_sections_per_document``; the rest is named in an issue."""
    min_chars = limits.slide_min_chars if unit_name == "Slide" else limits.section_min_chars
    sections = pack_sections(
        source, units, max_chars=limits.section_max_chars, min_chars=min_chars, unit_name=unit_name
    )
    for section in sections:
        if section.index > limits.max_sections_per_document:
            yield InputIssue(source, "truncated", _truncation(section, total_pages, limits), skipped=False)
            return
        problem = text_problem(section.text)  # what enqueue would refuse (a PDF page of U+FFFD glyphs)
        if problem is not None:
            yield InputIssue(source, problem[0], f"{section.label}: {problem[1]}", skipped=False)
            continue
        yield section


def _truncation(first_dropped: Section, total_pages: int | None, limits: BatchSettings) -> str:
    cap = limits.max_sections_per_document
    if first_dropped.page_start is not None and total_pages is not None:
        rest = f"pages {first_dropped.page_start}-{total_pages} of {total_pages}"
    else:
        rest = f"the text from section {first_dropped.index} on"
    return f"quizzed the first {cap} sections; {rest} not quizzed (batch.max_sections_per_document={cap})"
