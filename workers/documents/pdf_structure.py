"""Where a PDF's sections begin: its outline (bookmarks) when it has one, else headings in its text.

``structured_units(pages, outline)`` turns a stream of ``(page number, page text)`` into units that
open at section starts, each titled:

1. **Outline.** Bookmarks of the two top levels, in page order. Each one opens a unit on its page,
   at the line holding its title when the title is found there, else at the top of the page.
2. **Headings in the text** (no outline). A line is a heading when it is short, has no closing
   punctuation, capitalised, and follows a finished paragraph or another title line (numbered ones,
   "2.", "3.1", "Chapter 4", "Lecture 2", "IV.", may be a little longer); a page's first line (a
   slide title, in a deck exported to PDF) counts too. A first or last line that repeats on other
   pages (a running header or footer) or a page number never does.
3. **Pages.** Until the first heading, every page opens a unit without a title, as before; the
   caller titles those sections by their pages.

Pure functions over text: the pypdf calls stay in ``suture.workers.documents.readers``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

from suture.workers.documents.section import Unit

MAX_HEADING_CHARS = 90
MAX_HEADING_WORDS = 12
MAX_LONE_HEADING_WORDS = 8
_NUMBERED = re.compile(
    r"^(?:\d{1,2}(?:\.\d{1,2}){0,3}\.?|[IVXLC]{1,6}\.|(?:chapter|section|part|lecture|unit|module|lesson|"
    r"week|topic|chapitre|kapitel|partie)\s+[\dIVXLC]{1,4}[.:]?)\s+\S",
    re.IGNORECASE,
)
_CLOSING = re.compile(r"[.,;!?]$|[-\u2013\u2014]$")
_ENDS_PARAGRAPH = re.compile(r"[.!?:)\"'\u201d]$")
_INNER_SENTENCE_END = re.compile(r"[a-z]{2}[.!?]\s+[A-Z]")
_PAGE_NUMBER = re.compile(r"^(?:page\s+)?\d+(?:\s*(?:/|of)\s*\d+)?$", re.IGNORECASE)


@dataclass(frozen=True)
class Mark:
    """One outline entry: a title and the (1-based) page it points at."""

    page: int
    title: str
    level: int = 1


def structured_units(pages: Iterable[tuple[int, str]], outline: Sequence[Mark]) -> Iterator[Unit]:
    """Units of a PDF that open at its sections (outline, else headings, else pages)."""
    if outline:
        yield from _outline_units(pages, outline)
    else:
        yield from _heading_units(pages)


def _outline_units(pages: Iterable[tuple[int, str]], outline: Sequence[Mark]) -> Iterator[Unit]:
    by_page: dict[int, list[Mark]] = {}
    for mark in outline:
        by_page.setdefault(mark.page, []).append(mark)
    seen_mark = False
    for number, text in pages:
        lines = text.splitlines()
        cuts = _cuts(lines, by_page.get(number, []))
        seen_mark = seen_mark or bool(cuts)
        yield from _split_page(number, lines, cuts, breaks_first=not seen_mark)


def _cuts(lines: list[str], marks: list[Mark]) -> list[tuple[int, str, int]]:
    """(line index, title, level) where each bookmark starts on the page; the top of the page if not found."""
    cuts: list[tuple[int, str, int]] = []
    start = 0
    for mark in marks:
        at = _find_line(lines, mark.title, start)
        at = start if at is None else at
        if cuts and cuts[-1][0] == at:
            continue  # two bookmarks at one place (a chapter and its first part): the outer one names it
        cuts.append((at, " ".join(mark.title.split()), mark.level))
        start = at
    return cuts


def _find_line(lines: list[str], title: str, start: int) -> int | None:
    wanted = _fold(title)
    if not wanted:
        return None
    for i in range(start, len(lines)):
        line = _fold(lines[i])
        if line and (line.startswith(wanted) or wanted.startswith(line)):
            return i
    return None


def _heading_units(pages: Iterable[tuple[int, str]]) -> Iterator[Unit]:
    edges = _Edges()
    seen_heading = False
    for number, text in pages:
        lines = text.splitlines()
        found = _heading_lines(lines, edges, first_page=number == 1)
        cuts = [(i, title, numbering_level(title)) for i in found for title in [" ".join(lines[i].split())]]
        seen_heading = seen_heading or bool(cuts)
        yield from _split_page(number, lines, cuts, breaks_first=not seen_heading)


class _Edges:
    """First and last lines of the pages read so far: one seen again is a running header or footer."""

    def __init__(self) -> None:
        self.seen: set[str] = set()

    def repeated(self, line: str, where: str) -> bool:
        key = f"{where}:{_fold(line)}"
        again = key in self.seen
        self.seen.add(key)
        return again or bool(_PAGE_NUMBER.match(line))


def _heading_lines(lines: list[str], edges: _Edges, *, first_page: bool) -> list[int]:
    filled = [i for i, line in enumerate(lines) if line.strip()]
    found = []
    for position, i in enumerate(filled):
        line = " ".join(lines[i].split())
        edge = "first" if position == 0 else "last" if position == len(filled) - 1 else None
        if edge is not None and edges.repeated(line, edge):
            continue
        if position == 0:
            # A page's first line: a slide title, or (a little longer) the title of the document.
            if _looks_like_title(line, MAX_HEADING_WORDS) if first_page else _is_title(line):
                found.append(i)
            continue
        previous = " ".join(lines[filled[position - 1]].split())
        after_paragraph = bool(_ENDS_PARAGRAPH.search(previous)) or _looks_like_title(
            previous, MAX_HEADING_WORDS
        )
        if after_paragraph and _is_title(line):
            found.append(i)
    return found


def _is_title(line: str) -> bool:
    """Short, no closing punctuation, capitalised; numbered headings may be a little longer."""
    return _looks_like_title(line, MAX_HEADING_WORDS if _NUMBERED.match(line) else MAX_LONE_HEADING_WORDS)


def _looks_like_title(line: str, max_words: int) -> bool:
    words = line.split()
    return (
        0 < len(words) <= max_words
        and len(line) <= MAX_HEADING_CHARS
        and not _CLOSING.search(line)
        and not _INNER_SENTENCE_END.search(line)
        and (line[0].isupper() or line[0].isdigit())
        and any(c.isalpha() for c in line)
    )


def numbering_level(title: str) -> int:
    """A heading's depth from its numbering: "3" and "3." are 1, "3.1" is 2; unnumbered ones are 1."""
    number = re.match(r"^(\d{1,2}(?:\.\d{1,2}){0,3})\.?\s", title)
    return number.group(1).count(".") + 1 if number else 1


def _split_page(
    number: int, lines: list[str], cuts: list[tuple[int, str, int]], *, breaks_first: bool
) -> Iterator[Unit]:
    """The page cut before each heading line: a leading piece continues the section before.

    A heading with no text of its own before the next heading of its level (a document title over
    its first chapter) is carried into the next piece, which keeps its own, more specific, title; one
    over a deeper heading (a chapter over its first section) stays a unit, so the chapter is known.
    """
    bounds = [at for at, _, _ in cuts]
    if not bounds or bounds[0] > 0:
        head = "\n".join(lines[: bounds[0] if bounds else len(lines)]).strip()
        if head:
            yield Unit(head, page=number, breaks=breaks_first and not cuts)
    carried = ""
    for n, (at, title, level) in enumerate(cuts):
        end = bounds[n + 1] if n + 1 < len(bounds) else len(lines)
        body = "\n".join(lines[at:end]).strip()
        if n + 1 < len(cuts) and "\n" not in body and cuts[n + 1][2] <= level:
            carried = f"{carried}\n{body}".strip()
            continue
        text = f"{carried}\n{body}".strip()
        carried = ""
        if text:
            yield Unit(text, page=number, breaks=True, title=title, level=level)


def _fold(text: str) -> str:
    return " ".join(text.split()).casefold()
