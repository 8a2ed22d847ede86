"""Packing text units into sections that follow the document's own outline.

Every heading opens a part; a part too long for one section is cut at paragraphs, then sentences,
then characters (``section.split_text``); a part shorter than ``min_chars`` is joined to its
neighbour under the same parent heading and the joined section is named after what it covers
(``section_titles.joined_title``). Packing holds one top-level heading's text at a time; text before
any heading (a PDF without headings, page after page) streams with one section held back, so a
500-page PDF is never held whole.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from suture.workers.documents.section import Section, Unit, split_text
from suture.workers.documents.section_titles import clean_title, joined_title


def pack_sections(
    source: str,
    units: Iterable[Unit],
    *,
    max_chars: int,
    min_chars: int,
    unit_name: str | None = None,
) -> Iterator[Section]:
    """Sections of at most ``max_chars`` that follow the document's headings, in document order.

    Every heading (and every untitled unit that ``breaks``, such as a PDF page before the first
    heading) opens a part. A part shorter than ``min_chars`` is joined to its neighbour under the same
    parent heading while both fit in ``max_chars`` (a chapter's introduction to its first section, a
    last short section to the one before), and the joined section is named after what it covers
    (``joined_title``). ``unit_name`` ("Slide") names joined parts by their pages ("Slides 3–5: ...").
    One top-level heading's part of the document is held at a time; text before any heading streams.
    """
    rules = _Rules(max_chars, min_chars, unit_name)
    tree = _Tree(rules)
    count = 0
    for unit in units:
        for piece in tree.add(unit):
            count += 1
            yield piece.section(source, count)
    for piece in tree.close():
        count += 1
        yield piece.section(source, count)


@dataclass(frozen=True)
class _Rules:
    max_chars: int
    min_chars: int
    unit_name: str | None


@dataclass
class _Piece:
    """Text on its way to becoming a section: its parts, pages, title, and the titles it joined."""

    parts: list[str]
    pages: list[int]
    title: str | None
    labels: list[str | None]

    @property
    def size(self) -> int:
        return sum(len(p) + 2 for p in self.parts)

    def joined(self, other: _Piece) -> _Piece:
        return _Piece(self.parts + other.parts, self.pages + other.pages, None, self.labels + other.labels)

    def section(self, source: str, index: int) -> Section:
        return Section(
            source=source,
            index=index,
            text="\n\n".join(self.parts).strip(),
            title=self.title,
            page_start=min(self.pages) if self.pages else None,
            page_end=max(self.pages) if self.pages else None,
        )


class _Merger:
    """Joins short pieces of one level (the parts under one heading) to a neighbour; holds one back."""

    def __init__(self, rules: _Rules, parent: str | None) -> None:
        self.rules, self.parent = rules, parent
        self.current: _Piece | None = None
        self.done: _Piece | None = None
        self.seen = 0
        self.out = 0

    def _fits(self, first: _Piece, second: _Piece) -> bool:
        return first.size + second.size <= self.rules.max_chars + 2

    def add(self, piece: _Piece) -> Iterator[_Piece]:
        self.seen += 1
        if self.current is None:
            self.current = piece
            return
        if self.current.size < self.rules.min_chars and self._fits(self.current, piece):
            self.current = self.current.joined(piece)
            return
        yield from self._settle()
        self.current = piece

    def _settle(self) -> Iterator[_Piece]:
        current, self.current = self.current, None
        if current is None:
            return
        if self.done is not None and current.size < self.rules.min_chars and self._fits(self.done, current):
            self.done = self.done.joined(current)
            return
        if self.done is not None:
            yield self._named(self.done, whole=False)
        self.done = current

    def close(self) -> Iterator[_Piece]:
        yield from self._settle()
        if self.done is not None:
            whole = self.out == 0 and len(self.done.labels) == self.seen and self.parent is not None
            yield self._named(self.done, whole=whole)
        self.done = None

    def _named(self, piece: _Piece, *, whole: bool) -> _Piece:
        self.out += 1
        if whole:  # all the parent's text in one section: it is the parent's section
            title = self.parent
        elif len(piece.labels) == 1:
            title = piece.labels[0]
        else:
            title = joined_title(piece.labels, self.parent, unit_name=self.rules.unit_name, pages=piece.pages)
        return _Piece(piece.parts, piece.pages, title, [title])


@dataclass
class _Node:
    """A heading and what is under it: its own pieces (text before its first subheading), then its
    children."""

    title: str | None
    level: int
    pieces: list[_Piece] = field(default_factory=list)
    children: list[_Node] = field(default_factory=list)


class _Tree:
    """The open headings (a stack); a top-level heading's text is packed when the next one opens."""

    def __init__(self, rules: _Rules) -> None:
        self.rules = rules
        self.root_merger = _Merger(rules, None)
        self.stack: list[_Node] = []
        self.tail: _Piece | None = None  # the root's own piece being filled (text before any heading)

    def add(self, unit: Unit) -> Iterator[_Piece]:
        title = clean_title(unit.title)
        if unit.breaks and title is not None:
            level = unit.level if unit.level is not None else 1
            while self.stack and self.stack[-1].level >= level:
                yield from self._pop()
            yield from self._flush_tail()
            node = _Node(title, level)
            if self.stack:
                self.stack[-1].children.append(node)
            self.stack.append(node)
            self._fill(node.pieces, unit, new=True, title=title)
            return
        if unit.breaks and unit.level is not None:  # an untitled slide: its own part at its level
            while self.stack and self.stack[-1].level >= unit.level:
                yield from self._pop()
        if self.stack:
            self._fill(self._last_leaf(self.stack[-1]).pieces, unit, new=unit.breaks)
        else:
            if unit.breaks:
                yield from self._flush_tail()
            pieces = [self.tail] if self.tail is not None else []
            self._fill(pieces, unit, new=False)
            for piece in pieces[:-1]:
                yield from self.root_merger.add(piece)
            self.tail = pieces[-1] if pieces else None

    def close(self) -> Iterator[_Piece]:
        while self.stack:
            yield from self._pop()
        yield from self._flush_tail()
        yield from self.root_merger.close()

    def _flush_tail(self) -> Iterator[_Piece]:
        if self.tail is not None:
            tail, self.tail = self.tail, None
            yield from self.root_merger.add(tail)

    def _pop(self) -> Iterator[_Piece]:
        node = self.stack.pop()
        if not self.stack:
            for piece in _packed(node, self.rules):
                yield from self.root_merger.add(piece)

    @staticmethod
    def _last_leaf(node: _Node) -> _Node:
        while node.children:
            node = node.children[-1]
        return node

    def _fill(self, pieces: list[_Piece], unit: Unit, *, new: bool, title: str | None = None) -> None:
        """Add a unit's text to the last piece, or to new ones (a new part, or text over ``max_chars``)."""
        for n, text in enumerate(split_text(unit.text, self.rules.max_chars)):
            last = pieces[-1] if pieces else None
            if (
                last is not None
                and not (new and n == 0)
                and last.size + len(text) + 2 <= self.rules.max_chars
            ):
                last.parts.append(text)
                if unit.page is not None:
                    last.pages.append(unit.page)
                continue
            opens = new and n == 0
            name = title if opens or last is None else last.labels[0]
            if name is not None and not opens:
                name = f"{name.removesuffix(' (cont.)')} (cont.)"
            pages = [unit.page] if unit.page is not None else []
            pieces.append(_Piece([text], pages, name, [name]))


def _packed(node: _Node, rules: _Rules) -> list[_Piece]:
    """A heading's pieces and its children's, short ones joined under this heading."""
    merger = _Merger(rules, node.title)
    out: list[_Piece] = []
    for piece in node.pieces:
        out.extend(merger.add(piece))
    for child in node.children:
        for piece in _packed(child, rules):
            out.extend(merger.add(piece))
    out.extend(merger.close())
    return out
