"""The source document as the simulator sees it: verbatim sentences and the terms they use.

Analyses are cached by text because every request of a job carries the same document.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

_SENTENCE = re.compile(r"[A-Z0-9][^.!?]*?[.!?](?=\s|$)", re.DOTALL)
_WORD = re.compile(r"[A-Za-z][A-Za-z-]*[A-Za-z]")
# Words too common to make a question or an option.
_STOPWORD_TEXT = """
about above after again against also although among another because been before being below
between both cannot could does doing down during each either every from further have having here
however into itself just more most much must other over same should since some such than that
their them themselves then there these they this those through under until upon very what when
where which while whom whose will with within without would your yours only many often used uses
using called known
"""
_STOPWORDS = frozenset(_STOPWORD_TEXT.split())
MIN_SENTENCE_WORDS = 6


@dataclass(frozen=True)
class Sentence:
    """One sentence, exactly as it appears in the document, and its content terms."""

    text: str
    terms: tuple[str, ...]


@dataclass(frozen=True)
class Document:
    """Sentences usable as questions, and every distinct term of the document."""

    text: str
    sentences: tuple[Sentence, ...]
    terms: tuple[str, ...]


def terms_of(text: str) -> list[str]:
    """The content words of a text, first occurrences only, in order."""
    seen: set[str] = set()
    terms = []
    for word in _WORD.findall(text):
        key = word.lower()
        if len(word) >= 4 and key not in _STOPWORDS and key not in seen:
            seen.add(key)
            terms.append(word)
    return terms


@lru_cache(maxsize=256)
def analyse(text: str) -> Document:
    """Split a document into question-worthy sentences and collect its terms."""
    sentences = []
    for match in _SENTENCE.finditer(text):
        sentence = match.group(0)
        terms = terms_of(sentence)
        if len(sentence.split()) >= MIN_SENTENCE_WORDS and terms and "?" not in sentence:
            sentences.append(Sentence(sentence, tuple(terms)))
    return Document(text=text, sentences=tuple(sentences), terms=tuple(terms_of(text)))
