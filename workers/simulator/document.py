"""The source document as the simulator sees it: verbatim sentences and the terms they use.

Analyses are cached because every request of a job carries the same document; the cache is keyed by
a digest of the text and bounded by the characters it holds (``MAX_CACHED_CHARS``), so a client
sending many large distinct prompts cannot make the simulator keep them all.
"""

from __future__ import annotations

import hashlib
import re
import threading
from collections import OrderedDict
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cached_property

# Sentences start with a capital (accented ones too: a French chapter) or a digit and run to the
# first . ! or ?, which must end the text or come before a space. Possessive: a sentence cannot
# run past that mark, so nothing is retried (half the time of the equivalent lazy ``[^.!?]*?``).
_SENTENCE = re.compile(r"[A-Z0-9\u00c0-\u00d6\u00d8-\u00de][^.!?]*+[.!?](?=\s|$)")
# A word: letters, with hyphens inside. Written without backtracking, it finds the words of 2+
# letters that ``[^\W\d_](?:[^\W\d_]|-)*[^\W\d_]`` finds (and single letters) a third faster: finding
# words is most of a large document's analysis.
_WORD = re.compile(r"[^\W\d_]+(?:-+[^\W\d_]+)*")
_CLAUSE_BREAK = re.compile(r"[,;:]\s+|\s+-+\s+")
# Words too common to make a question or an option.
_STOPWORD_TEXT = """
about above after again against also although among another because been before being below
between both cannot could does doing down during each either every from further have having here
however into itself just more most much must other over same should since some such than that
their them themselves then there these they this those through under until upon very what when
where which while whom whose will with within without would your yours only many often used uses
using called known
dans pour avec sont cette leur leurs elle elles nous vous mais donc comme plus aussi entre sans sous
chez tout tous toute toutes être avoir fait peut deux même très dont ainsi alors lors cela ceci celle
celui ceux quand lequel laquelle lesquels auquel selon après avant depuis pendant encore
"""
_STOPWORDS = frozenset(_STOPWORD_TEXT.split())
MIN_SENTENCE_WORDS = 6
MIN_CLAUSE_WORDS = 5
# Document characters whose analyses are kept (least recently used dropped first): a few hundred
# sections of a batch, a few MB of memory. A document larger than this is analysed every time.
MAX_CACHED_CHARS = 4_000_000
MAX_CACHED_DOCUMENTS = 256


@dataclass(frozen=True)
class Sentence:
    """One sentence, exactly as it appears in the document, and its content terms.

    The terms are found on first use (or given): a request uses those of the few sentences it quotes,
    and finding them for every sentence of a large document was most of its analysis.
    """

    text: str
    given_terms: tuple[str, ...] | None = field(default=None, compare=False, repr=False)

    @cached_property
    def terms(self) -> tuple[str, ...]:
        """The sentence's content words, first occurrences only, in order."""
        return self.given_terms if self.given_terms is not None else tuple(terms_of(self.text))


@dataclass(frozen=True)
class Document:
    """Sentences usable as questions, their clauses (for short documents), and every distinct term."""

    text: str
    sentences: tuple[Sentence, ...]
    terms: tuple[str, ...]

    @cached_property
    def clauses(self) -> tuple[Sentence, ...]:
        """The sentences' clauses that can carry a question, split on first use.

        Only a document with fewer sentences than questions needs them; a large one is never split.
        """
        return tuple(clause for sentence in self.sentences for clause in _clauses(sentence.text))


def has_terms(text: str) -> bool:
    """Whether ``terms_of(text)`` finds any term, stopping at the first (usually a sentence's first words)."""
    return any(len(word) >= 4 and word.lower() not in _STOPWORDS for word in _words(text))


def _words(text: str) -> Iterator[str]:
    return (match.group(0) for match in _WORD.finditer(text))


def terms_of(text: str) -> list[str]:
    """The content words of a text, first occurrences only, in order."""
    first: dict[str, str] = {}  # lowercased word -> its first spelling, in order of first occurrence
    for word in _WORD.findall(text):
        if len(word) >= 4:
            first.setdefault(word.lower(), word)
    return [word for key, word in first.items() if key not in _STOPWORDS]


class _Analyses:
    """Recent analyses by text digest, bounded by count and by the characters of their texts."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._entries: OrderedDict[bytes, Document] = OrderedDict()
        self._chars = 0

    def get(self, text: str) -> Document:
        key = hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()
        with self._lock:
            found = self._entries.get(key)
            if found is not None:
                self._entries.move_to_end(key)
                return found
        document = _analyse(text)
        if len(text) <= MAX_CACHED_CHARS:
            with self._lock:
                self._keep(key, document)
        return document

    def _keep(self, key: bytes, document: Document) -> None:
        if key not in self._entries:
            self._entries[key] = document
            self._chars += len(document.text)
        while self._chars > MAX_CACHED_CHARS or len(self._entries) > MAX_CACHED_DOCUMENTS:
            _, dropped = self._entries.popitem(last=False)
            self._chars -= len(dropped.text)


_ANALYSES = _Analyses()


def analyse(text: str) -> Document:
    """Split a document into question-worthy sentences and collect its terms (cached, bounded)."""
    return _ANALYSES.get(text)


def _analyse(text: str) -> Document:
    sentences = []
    for match in _SENTENCE.finditer(text):
        sentence = match.group(0)
        if "?" in sentence or len(sentence.split()) < MIN_SENTENCE_WORDS:
            continue
        if has_terms(sentence):
            sentences.append(Sentence(sentence))
    return Document(text=text, sentences=tuple(sentences), terms=tuple(terms_of(text)))


def _clauses(sentence: str) -> list[Sentence]:
    """The parts of a sentence between commas, semicolons, colons and dashes that can carry a question."""
    parts = [part.strip() for part in _CLAUSE_BREAK.split(sentence)]
    if len(parts) < 2:
        return []
    clauses = []
    for part in parts:
        terms = terms_of(part) if len(part.split()) >= MIN_CLAUSE_WORDS else []
        if terms:
            clauses.append(Sentence(part, tuple(terms)))
    return clauses
