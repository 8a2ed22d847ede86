"""Course documents in, quiz sections out: walk inputs, read .pdf/.md/.txt, skip bad files with a reason.

``iter_documents(inputs, settings.batch)`` streams ``Section`` (one quiz each) and ``InputIssue``
(a file skipped, or a note about how it was read) in input order, so a batch never holds a whole
corpus in memory. Errors: see ``workers.documents.errors``.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from config.settings import BatchSettings
from workers.documents.errors import DocumentError, InputNotFound, UnreadableDocument
from workers.documents.readers import decode_text, markdown_units, open_pdf, plain_units
from workers.documents.section import Section, Unit, pack_sections

__all__ = [
    "SUFFIXES",
    "DocumentError",
    "InputIssue",
    "InputNotFound",
    "Section",
    "UnreadableDocument",
    "find_files",
    "iter_documents",
]

SUFFIXES: frozenset[str] = frozenset({".pdf", ".md", ".markdown", ".txt"})


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
        return f"{self.source}: {verb}: {self.reason}: {self.detail}"


def find_files(inputs: Iterable[str | Path]) -> Iterator[Path]:
    """Expand inputs: files as given, folders walked in sorted order for supported suffixes."""
    for raw in inputs:
        path = Path(raw)
        if not path.exists():
            raise InputNotFound(path)
        if path.is_dir():
            yield from _walk(path)
        else:
            yield path


def _walk(folder: Path) -> Iterator[Path]:
    for root, dirs, files in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(files):
            if not name.startswith(".") and Path(name).suffix.lower() in SUFFIXES:
                yield Path(root) / name


def iter_documents(inputs: Iterable[str | Path], limits: BatchSettings) -> Iterator[Section | InputIssue]:
    """Every section of every input document, and an issue line for each file skipped or noted."""
    seen: dict[str, str] = {}
    for path in find_files(inputs):
        source = _display(path)
        try:
            yield from _document(path, source, seen, limits)
        except UnreadableDocument as exc:
            yield InputIssue(source, exc.reason, exc.detail)


def _display(path: Path) -> str:
    """The path as the user will recognise it: relative to the working directory when inside it."""
    try:
        return path.resolve().relative_to(Path.cwd().resolve()).as_posix()
    except ValueError:
        return path.as_posix()


def _document(
    path: Path, source: str, seen: dict[str, str], limits: BatchSettings
) -> Iterator[Section | InputIssue]:
    suffix = path.suffix.lower()
    if suffix not in SUFFIXES:
        raise UnreadableDocument(path, "unsupported", f"'{suffix or path.name}' is not .pdf, .md or .txt")
    data = _read_bytes(path, limits)
    digest = hashlib.sha256(data).hexdigest()
    if digest in seen:
        raise UnreadableDocument(path, "duplicate", f"same content as {seen[digest]}")
    seen[digest] = source
    if suffix == ".pdf":
        del data  # pypdf reads the file itself, page by page
        yield from _pdf_sections(path, source, limits)
    else:
        yield from _text_sections(path, source, data, limits)


def _read_bytes(path: Path, limits: BatchSettings) -> bytes:
    try:
        size_b = path.stat().st_size
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
    pdf = open_pdf(path)
    items = _bounded(source, pdf.units(), limits, total_pages=pdf.page_count)
    first = next(items, None)  # extracts pages only until the first section is complete
    if first is None:
        raise UnreadableDocument(path, "no_text", "no extractable text (a scanned PDF? run OCR on it first)")
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
        yield InputIssue(source, "pdf", f"{pdf.empty_pages} page(s) without extractable text", skipped=False)


def _require_text(path: Path, chars: int, limits: BatchSettings) -> None:
    if chars == 0:
        raise UnreadableDocument(path, "empty", "no text after decoding")
    if chars < limits.min_document_chars:
        detail = f"{chars} characters is under batch.min_document_chars={limits.min_document_chars}"
        raise UnreadableDocument(path, "too_short", detail)


def _bounded(
    source: str, units: Iterable[Unit], limits: BatchSettings, *, total_pages: int | None
) -> Iterator[Section | InputIssue]:
    """Sections of one document, at most ``max_sections_per_document``; the rest is named in an issue."""
    sections = pack_sections(
        source, units, max_chars=limits.section_max_chars, min_chars=limits.section_min_chars
    )
    for section in sections:
        if section.index > limits.max_sections_per_document:
            yield InputIssue(source, "truncated", _truncation(section, total_pages, limits), skipped=False)
            return
        yield section


def _truncation(first_dropped: Section, total_pages: int | None, limits: BatchSettings) -> str:
    cap = limits.max_sections_per_document
    if first_dropped.page_start is not None and total_pages is not None:
        rest = f"pages {first_dropped.page_start}-{total_pages} of {total_pages}"
    else:
        rest = f"the text from section {first_dropped.index} on"
    return f"quizzed the first {cap} sections; {rest} not quizzed (batch.max_sections_per_document={cap})"
