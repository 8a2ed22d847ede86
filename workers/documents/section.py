"""Sections: the pieces of a document that each get one quiz, and the text units they are made of.

A document is read as a stream of ``Unit`` (a markdown block under a heading, a Word heading's
paragraphs, a slide, a PDF page or the part of it under a bookmark), each heading with its depth;
``suture.workers.documents.packing`` packs them into ``Section``s that follow the document's outline.
``split_text`` cuts a text too long for one section at paragraphs, then sentences, then characters.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace
from typing import Any

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
# A run of paragraphs without a heading is cut into units of at most this many blocks (see heading_units).
BLOCKS_PER_UNIT = 200


@dataclass(frozen=True)
class Unit:
    """A piece of a document as read: text, its page (PDFs), and whether it opens a heading or page."""

    text: str
    page: int | None = None
    breaks: bool = False
    title: str | None = None
    level: int | None = None  # heading depth (1 = top; Word's Title 0); None: a top-level heading


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


def heading_units(blocks: Iterable[tuple[int | None, str]]) -> Iterator[Unit]:
    """Units of a document read as blocks of text, each a heading (with its level) or not (None).

    A heading opens a unit titled with its text, as a markdown heading does. A long run of blocks is
    cut every ``BLOCKS_PER_UNIT`` blocks into units that continue it (untitled, not breaking; packing
    joins them back), so the confined reader (``office_sandbox``) yields often: each unit is a step
    with its own CPU budget, and none holds a whole book.
    """
    block: list[str] = []
    head = Unit("")  # what the next unit opens with: a heading, or nothing (continued text)
    for depth, text in blocks:
        if block and (depth is not None or len(block) >= BLOCKS_PER_UNIT):
            yield replace(head, text="\n".join(block))
            block, head = [], Unit("")
        if depth is not None:
            head = Unit("", breaks=True, title=text, level=depth)
        block.append(text)
    if block:
        yield replace(head, text="\n".join(block))


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
