"""The simulated model's stem wordings, its give-away habits, and how it repairs a give-away.

A model told not to open every question alike varies its wording: each language has several
single-answer openings (the first is ``quizkinds.WORDING``'s), taken in turn from a random one, so
no opening holds more than a quarter of a quiz. At the model's ``same_opening_rate`` a whole quiz
keeps the first opening (the habit ``repeated_stem_opening`` catches); at its ``giveaway_rate`` a
single-answer question has one give-away habit: the answer left in the stem, a distractor that
contains the answer, or the heading number glued before a sentence kept in the quote. A long
(biased) correct answer in a cloze stem is ``long_blank_answer`` by itself.

Repairs of a stem or quote slice (``/questions/i/question``, ``/questions/i/source_quote``) succeed
at the model's slice fix rate: the heading number is dropped, every occurrence of the answer is
blanked, a stem that blanks a long phrase asks for it directly (what follows the words before the
gap), and a stem opening like too many others takes another opening. Wordings are the simulator's
own templates: a simulation, not a model.
"""

from __future__ import annotations

import random
import re
from typing import Any

from suture.contracts.quiz_giveaways import BLANK, contains_words, overlap
from suture.workers.simulator.profiles import ModelTraits
from suture.workers.simulator.prompt import Prompt
from suture.workers.simulator.quizkinds import blank, language_of
from suture.workers.simulator.repair_skill import slice_fix_rate

# Per language: single-answer openings; "{}" is the statement with its gap.
OPENINGS: dict[str, tuple[str, ...]] = {
    "en": (
        'Which term completes this statement from the document: "{}"?',
        'What word belongs in the gap: "{}"?',
        'According to the document, which term fills the gap in "{}"?',
        'In "{}", which term is missing?',
    ),
    "fr": (
        "Quel terme complète cet énoncé du document : « {} » ?",
        "Quel mot manque dans : « {} » ?",
        "Selon le document, quel terme remplit le vide dans « {} » ?",
        "Dans « {} », quel terme manque-t-il ?",
    ),
    "de": (
        "Welcher Begriff ergänzt diese Aussage des Dokuments: „{}“?",
        "Welches Wort fehlt in: „{}“?",
        "Laut dem Dokument: Welcher Begriff füllt die Lücke in „{}“?",
        "In „{}“: Welcher Begriff fehlt?",
    ),
    "es": (
        "¿Qué término completa esta afirmación del documento: «{}»?",
        "¿Qué palabra falta en: «{}»?",
        "Según el documento, ¿qué término llena el hueco en «{}»?",
        "En «{}», ¿qué término falta?",
    ),
    "it": (
        "Quale termine completa questa affermazione del documento: «{}»?",
        "Quale parola manca in: «{}»?",
        "Secondo il documento, quale termine riempie lo spazio in «{}»?",
        "In «{}», quale termine manca?",
    ),
    "pt": (
        "Que termo completa esta afirmação do documento: «{}»?",
        "Que palavra falta em: «{}»?",
        "Segundo o documento, que termo preenche a lacuna em «{}»?",
        "Em «{}», que termo falta?",
    ),
    "nl": (
        'Welk begrip maakt deze uitspraak uit het document af: "{}"?',
        'Welk woord ontbreekt in: "{}"?',
        'Volgens het document: welk begrip vult de open plek in "{}"?',
        'In "{}": welk begrip ontbreekt?',
    ),
}
# Per language: a direct question for a phrase, "{}" being the words before it in the document.
FOLLOWS: dict[str, str] = {
    "en": 'According to the document, what comes right after "{}"?',
    "fr": "Selon le document, qu'est-ce qui suit « {} » ?",
    "de": "Was folgt laut dem Dokument direkt auf „{}“?",
    "es": "Según el documento, ¿qué sigue a «{}»?",
    "it": "Secondo il documento, che cosa segue «{}»?",
    "pt": "Segundo o documento, o que vem depois de «{}»?",
    "nl": 'Wat volgt volgens het document direct op "{}"?',
}
NUMBERING = re.compile(r"^\s*\d{1,2}(?:\.\d{1,2}){0,3}\.?\s+(?=\(?[A-ZÀ-ÖØ-Þ])")
_TEXT_SLICE = re.compile(r"^/questions/(\d+)/(question|source_quote)$")
_STATEMENT = re.compile(r"[\"\u201c\u00ab\u201e]\s*(.+?)\s*[\"\u201d\u00bb\u201c]", re.DOTALL)
HABITS = ("answer_in_stem", "overlapping_distractor", "numbering")


def opening_plan(count: int, traits: ModelTraits, rng: random.Random, language: str) -> list[int]:
    """The opening of each single-answer question: in turn from a random one, or one for all (a habit)."""
    if rng.random() < traits.same_opening_rate:
        return [0] * count
    start = rng.randrange(len(OPENINGS[language]))
    return [(start + i) % len(OPENINGS[language]) for i in range(count)]


def single_stem(sentence: str, term: str, language: str, opening: int) -> str:
    """A single-answer question that blanks ``term`` everywhere in ``sentence``, worded by ``opening``."""
    wordings = OPENINGS[language]
    return wordings[opening % len(wordings)].format(blank(sentence, term))


def without_numbering(sentence: str) -> str:
    """A sentence without the heading number glued before it ("1 Measuring price The ..." -> "Measuring ...")."""
    return NUMBERING.sub("", sentence, count=1)


def clean_distractors(options: list[str], correct: str) -> bool:
    """True when no distractor gives the answer away (the writer's own check, as the rule does)."""
    return not any(overlap(option, correct, 0.85) for option in options)


def with_habit(
    question: dict[str, Any], sentence: str, term: str, rng: random.Random, language: str, opening: int
) -> dict[str, Any]:
    """The question with one give-away habit a model has (drawn; one that cannot apply falls back)."""
    habit = rng.choice(HABITS)
    correct = question["correct_answer_text"]
    if habit == "numbering" and NUMBERING.match(sentence):
        return {**question, "source_quote": sentence}
    if habit == "answer_in_stem":
        # Only the first occurrence blanked ("The _____' dilemma In the prisoners' dilemma"), or the
        # answer named beside the gap when the sentence has it once.
        gap = " ".join(re.sub(rf"\b{re.escape(term)}\b", "_____", sentence, count=1).split())
        if not contains_words(gap, correct):
            gap = f"{gap.rstrip('.')} ({correct})"
        return {**question, "question": OPENINGS[language][opening % len(OPENINGS[language])].format(gap)}
    options = list(question["options"])
    spare = next((j for j in range(len(options)) if options[j] != correct), None)
    if spare is not None:
        options[spare] = f"{correct} in part"
    return {**question, "options": options}


def repair_text(
    prompt: Prompt, traits: ModelTraits, rng: random.Random, effort: str | None = None
) -> dict[str, Any] | None:
    """The reply to a stem or quote slice (None: not such a slice); fixed at the model's slice fix rate."""
    match = _TEXT_SLICE.match(prompt.slice_pointer or "")
    if match is None or not isinstance(prompt.slice_value, str):
        return None
    text = prompt.slice_value
    if rng.random() >= slice_fix_rate(traits, effort):
        return {"value": text}
    if match.group(2) == "source_quote":
        return {"value": without_numbering(text)}
    question = prompt.context if isinstance(prompt.context, dict) else {}
    answer = str(question.get("correct_answer_text") or "")
    language = language_of(prompt.text, prompt.document)
    return {"value": fixed_stem(text, answer, prompt.failure_codes, language, rng)}


def fixed_stem(stem: str, answer: str, codes: frozenset[str], language: str, rng: random.Random) -> str:
    """``stem`` with the give-aways named by ``codes`` repaired (the answer itself is kept elsewhere)."""
    found = _STATEMENT.search(stem)
    statement = found.group(1) if found else stem
    if "section_number_in_text" in codes:
        statement = without_numbering(statement)
    if "answer_in_stem" in codes and answer:
        statement = blank(_without_hint(statement, answer), answer)
    if "long_blank_answer" in codes and BLANK.search(statement):
        words = (
            BLANK.split(statement, maxsplit=1)[0].split()[-8:] or statement.replace("_____", "").split()[:8]
        )
        return FOLLOWS[language].format(" ".join(words))
    wordings = OPENINGS[language]
    current = next((i for i, w in enumerate(wordings) if stem.startswith(w.split("{}")[0])), None)
    if current is None or found is None:  # not one of its single-answer wordings: the statement in place
        return stem.replace(found.group(1), statement) if found else statement
    if "repeated_stem_opening" in codes:
        current = (current + 1 + rng.randrange(len(wordings) - 1)) % len(wordings)
    return wordings[current].format(statement)


def _without_hint(statement: str, answer: str) -> str:
    return statement.replace(f" ({answer})", "")
