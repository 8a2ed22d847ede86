"""Near-duplicate texts by shared words: the measure behind the quiz rule ``duplicate_question``.

Two texts are compared as sets of normalized words (case folded, punctuation and underscores
dropped), by their Jaccard similarity: shared distinct words / all distinct words. 1.0 means the
same words (an exact duplicate up to case, punctuation and word order). The measure catches copies
and light rewordings (a word added, dropped or moved); it does not catch paraphrases with other words.

Candidates are found with prefix filtering (the all-pairs similarity join of Bayardo et al.): with
words ordered rarest first, two sets that reach the threshold share a word among the first
``len - ceil(threshold * len) + 1`` of each, so a 1,000-question quiz is not compared pair by pair.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

_WORD = re.compile(r"[^\W_]+")
# Shares like 0.85 computed as 17/20 may land a hair below the threshold they equal.
_EPSILON = 1e-9


@dataclass(frozen=True)
class Repeat:
    """Text ``later`` repeats the earlier text ``earlier``, sharing ``similarity`` of their words."""

    later: int
    earlier: int
    similarity: float

    @property
    def exact(self) -> bool:
        """True when both texts have the same words (case, punctuation and order aside)."""
        return self.similarity >= 1.0 - _EPSILON


def words(text: str) -> frozenset[str]:
    """The distinct normalized words of a text."""
    return frozenset(_WORD.findall(text.casefold()))


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    """Shared distinct words over all distinct words (0.0 when both are empty)."""
    union = len(a | b)
    return len(a & b) / union if union else 0.0


def repeats(texts: Sequence[str], threshold: float) -> list[Repeat]:
    """For each text that repeats an earlier one (similarity >= threshold), its first such earlier text.

    Blank texts (no words) never count as repeats: another rule reports them.
    """
    if not 0 < threshold <= 1:
        raise ValueError(f"threshold must be in (0, 1], got {threshold}")
    sets = [words(t) for t in texts]
    rank = _rarest_first(sets)
    index: dict[str, list[int]] = {}
    found: list[Repeat] = []
    for j, current in enumerate(sets):
        if not current:
            continue
        ordered = sorted(current, key=rank.__getitem__)
        prefix = ordered[: len(current) - math.ceil(threshold * len(current) - _EPSILON) + 1]
        best = _first_match(j, current, prefix, sets, index, threshold)
        if best is not None:
            found.append(best)
        for word in prefix:
            index.setdefault(word, []).append(j)
    return found


def _rarest_first(sets: Sequence[frozenset[str]]) -> dict[str, tuple[int, str]]:
    counts = Counter(word for s in sets for word in s)
    return {word: (n, word) for word, n in counts.items()}


def _first_match(
    j: int,
    current: frozenset[str],
    prefix: Sequence[str],
    sets: Sequence[frozenset[str]],
    index: dict[str, list[int]],
    threshold: float,
) -> Repeat | None:
    candidates = sorted({i for word in prefix for i in index.get(word, ())})
    for i in candidates:
        other = sets[i]
        # Length filter: sets whose sizes differ too much cannot reach the threshold.
        if min(len(other), len(current)) < threshold * max(len(other), len(current)) - _EPSILON:
            continue
        similarity = jaccard(current, other)
        if similarity >= threshold - _EPSILON:
            return Repeat(later=j, earlier=i, similarity=similarity)
    return None
