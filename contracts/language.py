"""A document's language from its stop words, and the words a quiz uses in each language.

``detect_language(text)`` counts, per language, the occurrences of its most frequent function
words (articles, prepositions, pronouns) among the text's words, and returns the language whose
share is the highest, if it is clear: at least ``MIN_SHARE`` of the words and ``MIN_LEAD`` times the
runner-up. Otherwise None (the caller keeps its default). This is the classic stop-word heuristic: a
course chapter of a few hundred words is told apart reliably among these seven languages, with no
dependency and no model; it cannot tell a language it has no list for, and says so by returning None.
"""

from __future__ import annotations

import re
from collections import Counter

# ISO 639-1 code -> the English name used in prompts.
NAMES = {
    "en": "English",
    "fr": "French",
    "de": "German",
    "es": "Spanish",
    "it": "Italian",
    "pt": "Portuguese",
    "nl": "Dutch",
}
# A true/false question's two options, true first, per language.
TRUE_FALSE = {
    "en": ("True", "False"),
    "fr": ("Vrai", "Faux"),
    "de": ("Wahr", "Falsch"),
    "es": ("Verdadero", "Falso"),
    "it": ("Vero", "Falso"),
    "pt": ("Verdadeiro", "Falso"),
    "nl": ("Waar", "Onwaar"),
}
_STOP_WORDS = {
    "en": "the of and to in is that it for are as with was on be by this which from or an these",
    "fr": "le la les des du de un une et est en dans que qui pour sur par au aux ce cette sont avec",
    "de": "der die das und ist nicht ein eine zu den dem mit sich auf für von im sind auch des",
    "es": "el la los las de del y en que es por un una para con se su al como más son",
    "it": "il lo la gli le di del della e è che un una per con non sono nel alla dei",
    "pt": "o a os as de do da dos das e em que é um uma para com não no na por são",
    "nl": "de het een en van in is dat op te zijn met voor niet aan er die ook als",
}
STOP_WORDS = {code: frozenset(words.split()) for code, words in _STOP_WORDS.items()}
_WORD = re.compile(r"[^\W\d_]+")
MIN_WORDS = 20  # fewer words than this: too little to tell
MIN_SHARE = 0.08  # the winner's stop words are at least this share of all words
MIN_LEAD = 1.3  # ...and this many times the runner-up's share
SAMPLE_CHARS = 20_000  # the first characters read: a chapter's language shows long before


def detect_language(text: str) -> str | None:
    """The text's language code (``NAMES``' keys), or None when the text is too short or unclear."""
    words = _WORD.findall(text[:SAMPLE_CHARS].casefold())
    if len(words) < MIN_WORDS:
        return None
    counts = Counter(words)
    scores = sorted(
        ((sum(counts[w] for w in stop) / len(words), code) for code, stop in STOP_WORDS.items()),
        reverse=True,
    )
    (best, code), (second, _) = scores[0], scores[1]
    if best < MIN_SHARE or best < MIN_LEAD * second:
        return None
    return code


def language_name(code: str) -> str:
    """The English name of a language code (the code itself if unknown)."""
    return NAMES.get(code, code)
