"""Sections: the pieces of a document that each get one quiz, packed from a stream of text units.

A document is read as a stream of ``Unit`` (a markdown block under a heading, a paragraph, a PDF
page) and packed greedily into sections of at most ``max_chars``: a heading or a new page starts
a new section once the current one holds ``min_chars``; a unit too long for one section is cut at
paragraphs, then sentences, then characters; a short last section joins the one before. Packing
is lazy (one section held back), so a 500-page PDF is never held whole.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


@dataclass(frozen=True)
class Unit:
    """A piece of a document as read: text, its page (PDFs), and whether it opens a heading or page."""

    text: str
    page: int | None = None
    breaks: bool = False
    title: str | None = None


@dataclass(frozen=True)
class Section:
    """One quiz's worth of a document, knowing where it came from (file, section number, pages)."""

    source: str
    index: int
    text: str
    title: str | None = None
    page_start: int | None = None
    page_end: int | None = None
    notes: tuple[str, ...] = field(default=())

    @property
    def content_sha256(self) -> str:
        """Hash of the text alone, so a moved or renamed file still maps to the same jobs."""
        return hashlib.sha256(self.text.encode("utf-8")).hexdigest()

    @property
    def label(self) -> str:
        """A short human reference, e.g. ``examples/tcp.pdf §2 (pp. 3-4)``."""
        where = f"{self.source} §{self.index}"
        if self.page_start is not None:
            pages = (
                f"p. {self.page_start}"
                if self.page_start == self.page_end
                else f"pp. {self.page_start}-{self.page_end}"
            )
            where += f" ({pages})"
        return where

    def describe(self) -> dict[str, Any]:
        """The JSON form written as ``source`` in quizzes.jsonl and the reports."""
        pages = None if self.page_start is None else [self.page_start, self.page_end]
        return {"file": self.source, "section": self.index, "title": self.title, "pages": pages}


def pack_sections(source: str, units: Iterable[Unit], *, max_chars: int, min_chars: int) -> Iterator[Section]:
    """Pack units into sections of at most ``max_chars`` characters, in document order.

    A document's last section, when shorter than ``min_chars``, joins the one before if both fit in
    ``max_chars``: a tail too short for a quiz of its own is not left alone.
    """
    packer = _Packer(source, max_chars, min_chars)
    held: Section | None = None
    for unit in units:
        for section in packer.add(unit):
            if held is not None:
                yield held
            held = section
    for last in packer.flush():
        if (
            held is not None
            and len(last.text) < min_chars
            and len(held.text) + len(last.text) + 2 <= max_chars
        ):
            last = _joined(held, last)
        elif held is not None:
            yield held
        held = last
    if held is not None:
        yield held


def _joined(first: Section, second: Section) -> Section:
    pages = [
        p for p in (first.page_start, first.page_end, second.page_start, second.page_end) if p is not None
    ]
    return Section(
        source=first.source,
        index=first.index,
        text=f"{first.text}\n\n{second.text}",
        title=first.title or second.title,
        page_start=min(pages) if pages else None,
        page_end=max(pages) if pages else None,
        notes=first.notes + second.notes,
    )


class _Packer:
    """The greedy state of ``pack_sections``: the section being filled."""

    def __init__(self, source: str, max_chars: int, min_chars: int) -> None:
        self.source, self.max_chars, self.min_chars = source, max_chars, min_chars
        self.parts: list[str] = []
        self.size = 0
        self.count = 0
        self.title: str | None = None
        self.pages: list[int] = []

    def add(self, unit: Unit) -> Iterator[Section]:
        for n, piece in enumerate(split_text(unit.text, self.max_chars)):
            opens = unit.breaks and n == 0
            too_big = self.size + len(piece) + 2 > self.max_chars
            if self.parts and (too_big or (opens and self.size >= self.min_chars)):
                yield from self.flush()
            if not self.parts and unit.title:
                self.title = unit.title
            self.parts.append(piece)
            self.size += len(piece) + 2
            if unit.page is not None:
                self.pages.append(unit.page)

    def flush(self) -> Iterator[Section]:
        text = "\n\n".join(self.parts).strip()
        if text:
            self.count += 1
            yield Section(
                source=self.source,
                index=self.count,
                text=text,
                title=self.title,
                page_start=min(self.pages) if self.pages else None,
                page_end=max(self.pages) if self.pages else None,
            )
        self.parts, self.size, self.title, self.pages = [], 0, None, []


def split_text(text: str, max_chars: int) -> list[str]:
    """Cut text into pieces of at most ``max_chars``, preferring paragraph, then sentence boundaries."""
    text = text.strip()
    if len(text) <= max_chars:
        return [text] if text else []
    for pattern in (r"\n\s*\n", r"\n", _SENTENCE_END.pattern):
        pieces = [p.strip() for p in re.split(pattern, text) if p.strip()]
        if len(pieces) > 1:
            return _regroup(pieces, max_chars)
    return [text[i : i + max_chars] for i in range(0, len(text), max_chars)]


def _regroup(pieces: list[str], max_chars: int) -> list[str]:
    """Join consecutive pieces back together while they fit; split any that alone do not."""
    out: list[str] = []
    current = ""
    for piece in pieces:
        for part in split_text(piece, max_chars) if len(piece) > max_chars else [piece]:
            if current and len(current) + len(part) + 2 > max_chars:
                out.append(current)
                current = ""
            current = f"{current}\n\n{part}" if current else part
    if current:
        out.append(current)
    return out
