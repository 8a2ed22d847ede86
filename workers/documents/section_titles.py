"""Section titles as a reader sees them: clean text, and names for sections joined from several headings.

``clean_title(raw)`` drops Markdown marks (``**bold**``, ``[text](url)``, `` `code` ``, trailing
``#``), collapses whitespace and shortens a long title at a word, never mid-word. ``joined_title``
names a section made of several short headings after what it covers: "6.1–6.4 Externalities" for
numbered headings under a parent, "Slides 3–5: Supply shocks" for slides, "Market failures:
Externalities, Public goods" otherwise. Pure string functions.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

MAX_TITLE_CHARS = 90
_IMAGE = re.compile(r"!\[([^\]]*)\]\([^)]*\)")
_LINK = re.compile(r"\[([^\]]+)\]\([^)]*\)|\[([^\]]+)\]\[[^\]]*\]")
_HTML_TAG = re.compile(r"</?[A-Za-z][^>]*>")
_EMPHASIS = re.compile(r"(\*\*|__|\*|_|~~|`+)(?=\S)(.+?)(?<=\S)\1")
_TRAILING_HASHES = re.compile(r"\s+#+\s*$")
_NUMBER = re.compile(r"^(\d{1,3}(?:\.\d{1,3})*)(?:\s*[\u2013-]\s*(\d{1,3}(?:\.\d{1,3})*))?\.?\s+(\S.*)$")
_CONTINUED = re.compile(r"\s*[(\[]?\s*(?:cont(?:inued|\.|'d)?|suite)\s*[)\]]?\s*$", re.IGNORECASE)


def clean_title(raw: str | None, max_chars: int = MAX_TITLE_CHARS) -> str | None:
    """The title as plain text: no Markdown marks or tags, one space between words, cut at a word."""
    if raw is None:
        return None
    text = _TRAILING_HASHES.sub("", raw)
    text = _IMAGE.sub(r"\1", text)
    text = _LINK.sub(lambda m: m.group(1) or m.group(2), text)
    text = _HTML_TAG.sub("", text)
    for _ in range(3):  # nested marks: ***both*** is ** inside *
        text = _EMPHASIS.sub(r"\2", text)
    text = text.replace("\\", "")
    text = " ".join(text.split()).strip(" #:")
    return shorten(text, max_chars) or None


def shorten(text: str, max_chars: int = MAX_TITLE_CHARS) -> str:
    """``text`` if it fits, else cut at the last whole word that fits, with an ellipsis."""
    if len(text) <= max_chars:
        return text
    cut = text[: max_chars - 1]
    if not text[max_chars - 1].isspace():  # the last word does not end here: drop it
        cut = cut.rsplit(" ", 1)[0]
    cut = cut.rstrip(" ,;:-\u2013")
    return f"{cut}\u2026"


def section_number(title: str) -> tuple[str, str, str] | None:
    """``(first, last, words)`` of a numbered title: "6.1 Taxes" -> ("6.1", "6.1", "Taxes")."""
    found = _NUMBER.match(title)
    if found is None:
        return None
    return found.group(1), found.group(2) or found.group(1), found.group(3)


def joined_title(
    labels: Sequence[str | None], parent: str | None, *, unit_name: str | None, pages: Sequence[int]
) -> str | None:
    """The name of one section joined from several parts (their titles, in order) under ``parent``.

    Slides are named by their numbers and what they show; numbered headings by their number range
    and their parent ("6.1–6.4 Externalities"); other headings by their parent and their own titles.
    Parts without a title (PDF pages before the first heading) add nothing to the name.
    """
    titles = _distinct([label for label in labels if label and label != parent])
    if unit_name is not None and pages:
        first, last = min(pages), max(pages)
        span = f"{unit_name}s {first}\u2013{last}" if first != last else f"{unit_name} {first}"
        return shorten(f"{span}: {', '.join(titles)}") if titles else span
    if not titles:
        return parent
    if len(titles) == 1:  # a parent's introduction joined to its one section: that section names it
        return shorten(titles[0])
    numbered = [section_number(t) for t in titles]
    if numbered[0] is not None and numbered[-1] is not None:
        words = _words(parent) if parent else ", ".join(n[2] for n in numbered if n is not None)
        return shorten(f"{numbered[0][0]}\u2013{numbered[-1][1]} {words}")
    listed = ("; " if any("," in t for t in titles) else ", ").join(titles)
    with_parent = f"{parent}: {listed}"
    return with_parent if parent and len(with_parent) <= MAX_TITLE_CHARS else shorten(listed)


def _words(title: str) -> str:
    """A title without its leading number ("6 Externalities" -> "Externalities")."""
    numbered = section_number(title)
    return numbered[2] if numbered is not None else title


def _distinct(titles: list[str]) -> list[str]:
    """Titles in order, each once; "Supply shocks (cont.)" is "Supply shocks" again."""
    out: list[str] = []
    for title in titles:
        base = _CONTINUED.sub("", title) or title
        if base not in out:
            out.append(base)
    return out
