"""A source document prepared for quote lookups that forgive whitespace and typographic quotes.

Models copy quotes with line breaks collapsed and curly quotes straightened, so both the source
and the quote are folded the same way before searching; positions map back to the original text
so an excerpt shows the document as written.
"""

from __future__ import annotations

import bisect
import re

# One-to-one character folds (length-preserving, so positions inside a word stay valid).
_FOLD = str.maketrans(
    {"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"', "\u2013": "-", "\u2014": "-"}
)
_WORD = re.compile(r"\S+")


class SourceText:
    """The source document, with a whitespace-folded copy and a map back to original positions."""

    def __init__(self, text: str) -> None:
        self.text = text
        words = [(m.start(), m.group()) for m in _WORD.finditer(text.translate(_FOLD))]
        self._original_starts = [start for start, _ in words]
        self._folded_starts: list[int] = []
        # Word -> folded offsets: lets a quote be located from one of its inner words instead of
        # scanning the whole document for each of many quotes (which is quadratic in quiz size).
        self._word_offsets: dict[str, list[int]] = {}
        offset = 0
        for _, word in words:
            self._folded_starts.append(offset)
            self._word_offsets.setdefault(word, []).append(offset)
            offset += len(word) + 1
        self.folded = " ".join(word for _, word in words)

    def find(self, quote: str) -> tuple[int, int] | None:
        """The (start, end) of ``quote`` in the original text, or None if it does not occur."""
        needle = fold(quote)
        if not needle:
            return None
        at = self._locate(needle)
        if at < 0:
            return None
        return self._original(at), self._original(at + len(needle) - 1) + 1

    def _locate(self, needle: str) -> int:
        words = needle.split(" ")
        if len(words) < 3:
            return self.folded.find(needle)
        # An inner word is whole in the source wherever the quote occurs (its ends may be partial).
        offsets, shift = [], 0
        for position, word in enumerate(words):
            if 0 < position < len(words) - 1:
                offsets.append((len(self._word_offsets.get(word, ())), shift, word))
            shift += len(word) + 1
        _, shift, word = min(offsets)
        for start in self._word_offsets.get(word, ()):
            if start >= shift and self.folded.startswith(needle, start - shift):
                return start - shift
        return -1

    def excerpt(self, quote: str, margin_chars: int) -> str | None:
        """The quote as written in the source with ``margin_chars`` of context each side."""
        span = self.find(quote)
        if span is None:
            return None
        start, end = max(0, span[0] - margin_chars), min(len(self.text), span[1] + margin_chars)
        prefix = "..." if start > 0 else ""
        suffix = "..." if end < len(self.text) else ""
        return f"{prefix}{self.text[start:end]}{suffix}"

    def _original(self, folded_index: int) -> int:
        word = bisect.bisect_right(self._folded_starts, folded_index) - 1
        return self._original_starts[word] + (folded_index - self._folded_starts[word])


def fold(text: str) -> str:
    """The form quotes are compared in: typographic quotes/dashes straightened, whitespace collapsed."""
    return " ".join(text.translate(_FOLD).split())
