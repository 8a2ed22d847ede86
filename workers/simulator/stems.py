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

import hashlib
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
# Per language: direct questions for a phrase, "{}" being the words before it in the document.
FOLLOWS: dict[str, tuple[str, ...]] = {
    "en": (
        'According to the document, what comes right after "{}"?',
        'How does the document continue "{}"?',
        'What follows "{}" in the document?',
    ),
    "fr": (
        "Selon le document, qu'est-ce qui suit « {} » ?",
        "Comment le document poursuit-il « {} » ?",
        "Que dit le document après « {} » ?",
    ),
    "de": (
        "Was folgt laut dem Dokument direkt auf „{}“?",
        "Wie setzt das Dokument „{}“ fort?",
        "Was steht im Dokument nach „{}“?",
    ),
    "es": (
        "Según el documento, ¿qué sigue a «{}»?",
        "¿Cómo continúa el documento «{}»?",
        "¿Qué dice el documento después de «{}»?",
    ),
    "it": (
        "Secondo il documento, che cosa segue «{}»?",
        "Come prosegue il documento «{}»?",
        "Che cosa dice il documento dopo «{}»?",
    ),
    "pt": (
        "Segundo o documento, o que vem depois de «{}»?",
        "Como o documento continua «{}»?",
        "O que diz o documento depois de «{}»?",
    ),
    "nl": (
        'Wat volgt volgens het document direct op "{}"?',
        'Hoe gaat het document verder na "{}"?',
        'Wat zegt het document na "{}"?',
    ),
}
NUMBERING = re.compile(r"^\s*\d{1,2}(?:\.\d{1,2}){0,3}\.?\s+(?=\(?[A-ZÀ-ÖØ-Þ])")
_TEXT_SLICE = re.compile(r"^/questions/(\d+)/(question|source_quote)$")
_STATEMENT = re.compile(r"[\"\u201c\u00ab\u201e]\s*(.+?)\s*[\"\u201d\u00bb\u201c]", re.DOTALL)
HABITS = ("answer_in_stem", "overlapping_distractor", "numbering")


def opening_plan(sentences: list[str], traits: ModelTraits, rng: random.Random, language: str) -> list[int]:
    """The opening of each question: one per sentence (the same sentence, the same wording, as a model
    asking again words it alike), spread so that none holds more than a quarter of the quiz; or one
    opening for all (the habit ``repeated_stem_opening`` catches)."""
    if rng.random() < traits.same_opening_rate:
        return [0] * len(sentences)
    count = len(OPENINGS[language])
    plan = [int(hashlib.sha256(text.encode()).hexdigest(), 16) % count for text in sentences]
    most = max(1, -(-len(plan) // count))  # a quarter of the quiz, rounded up
    for i, opening in enumerate(plan):  # the writer's own check: later questions move to rarer openings
        if plan[:i].count(opening) >= most:
            plan[i] = min(range(count), key=lambda o: (plan[:i].count(o), o))
    return plan


def single_stem(sentence: str, term: str, language: str, opening: int) -> str:
    """A single-answer question that blanks ``term`` everywhere in ``sentence``, worded by ``opening``."""
    return OPENINGS[language][_opening_without(opening, term, language)].format(blank(sentence, term))


def _opening_without(opening: int, answer: str, language: str) -> int:
    """``opening``, or the next wording whose own words do not name ``answer`` ("term", "document")."""
    wordings = OPENINGS[language]
    for step in range(len(wordings)):
        candidate = (opening + step) % len(wordings)
        if not answer or not contains_words(wordings[candidate].replace("{}", ""), answer):
            return candidate
    return opening % len(wordings)


def without_numbering(sentence: str) -> str:
    """A sentence without the heading number glued before it ("1 Measuring price The ..." -> "Measuring
    ...")."""
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


STEM_CODES = frozenset(
    {"answer_in_stem", "long_blank_answer", "section_number_in_text", "repeated_stem_opening"}
)
_QUESTION = re.compile(r"^/questions/\d+$")


def whole_question_stem(
    reply: dict[str, Any], prompt: Prompt, traits: ModelTraits, rng: random.Random, effort: str | None = None
) -> dict[str, Any]:
    """A whole-question reply whose stem also had give-aways named: its stem repaired too (at the fix
    rate)."""
    value = reply.get("value")
    codes = prompt.failure_codes & STEM_CODES
    if not codes or not isinstance(value, dict) or not _QUESTION.match(prompt.slice_pointer or ""):
        return reply
    if not isinstance(value.get("question"), str) or rng.random() >= slice_fix_rate(traits, effort):
        return reply
    language = language_of(prompt.text, prompt.document)
    answer = str(value.get("correct_answer_text") or "")
    stem = fixed_stem(value["question"], answer, codes, language, rng)
    quote = str(value.get("source_quote") or "")
    return {"value": {**value, "question": stem, "source_quote": without_numbering(quote)}}


def fixed_stem(stem: str, answer: str, codes: frozenset[str], language: str, rng: random.Random) -> str:
    """``stem`` with the give-aways named by ``codes`` repaired (the answer itself is kept elsewhere)."""
    found = _STATEMENT.search(stem)
    statement = found.group(1) if found else stem
    wordings = OPENINGS[language]
    current = next((i for i, w in enumerate(wordings) if stem.startswith(w.split("{}")[0])), None)
    if "section_number_in_text" in codes:
        statement = without_numbering(statement)
    if "answer_in_stem" in codes and answer:
        # In a cloze the answer's other occurrences become gaps too; elsewhere they are elided.
        statement = _without_hint(statement, answer)
        statement = blank(statement, answer) if current is not None else _elided(statement, answer)
    if "long_blank_answer" in codes and BLANK.search(statement):
        return rng.choice(FOLLOWS[language]).format(_lead(statement, answer))
    if current is None or found is None:  # not one of its single-answer wordings: the statement in place
        return stem.replace(found.group(1), statement) if found else statement
    if "repeated_stem_opening" in codes:
        current = (current + 1 + rng.randrange(len(wordings) - 1)) % len(wordings)
    return wordings[_opening_without(current, answer, language)].format(statement)


def _lead(statement: str, answer: str) -> str:
    """Up to 8 words before the gap (after the answer's last occurrence there), else "…" and those after."""
    before = BLANK.split(statement, maxsplit=1)[0]
    if answer and contains_words(before, answer):
        before = re.split(re.escape(answer), before, flags=re.IGNORECASE)[-1]
    words = before.split()[-8:]
    if words:
        return " ".join(words)
    after = BLANK.split(statement, maxsplit=1)[-1].replace("_____", "").split()[:8]
    return "\u2026 " + _elided(" ".join(after), answer)


def _elided(text: str, answer: str) -> str:
    pattern = rf"(?<![^\W_]){re.escape(answer)}(?![^\W_])"
    return re.sub(pattern, "\u2026", text, flags=re.IGNORECASE) if answer else text


def _without_hint(statement: str, answer: str) -> str:
    return statement.replace(f" ({answer})", "")
