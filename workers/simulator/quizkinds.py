"""The simulated model's wording per language, and its multiple-answer and true/false questions.

The language is the prompt's ("language code xx", which the quiz contract states), else the
document's own (``suture.contracts.language``), as a model writes in the language it is shown; the
kinds are the prompt's "Question kinds:" line, in turn (question i gets kind i mod their count). A
multiple-answer question blanks two terms of one sentence; a true/false one states a sentence of the
document, or the same sentence with one term swapped for another of the document's (a false claim).
The phrasings are the simulator's own templates, one set per language: a simulation, not a model.
"""

from __future__ import annotations

import random
import re
from typing import Any

from suture.config.settings import QuizRules
from suture.contracts.language import TRUE_FALSE, detect_language
from suture.workers.simulator.bias import distractors
from suture.workers.simulator.document import Document, Sentence

# Per language: (single stem, multiple stem, true/false stem, explanation, title), "{}" = the sentence.
WORDING: dict[str, tuple[str, str, str, str, str]] = {
    "en": (
        'Which term completes this statement from the document: "{}"?',
        'Which terms complete this statement from the document (select all that apply): "{}"?',
        'True or false: "{}"?',
        'The document says: "{}"',
        "Quiz: {}",
    ),
    "fr": (
        "Quel terme complète cet énoncé du document : « {} » ?",
        "Quels termes complètent cet énoncé du document (plusieurs réponses) : « {} » ?",
        "Vrai ou faux : « {} » ?",
        "Le document dit : « {} »",
        "Quiz : {}",
    ),
    "de": (
        "Welcher Begriff ergänzt diese Aussage des Dokuments: „{}“?",
        "Welche Begriffe ergänzen diese Aussage des Dokuments (mehrere Antworten): „{}“?",
        "Wahr oder falsch: „{}“?",
        "Das Dokument sagt: „{}“",
        "Quiz: {}",
    ),
    "es": (
        "¿Qué término completa esta afirmación del documento: «{}»?",
        "¿Qué términos completan esta afirmación del documento (varias respuestas): «{}»?",
        "¿Verdadero o falso: «{}»?",
        "El documento dice: «{}»",
        "Cuestionario: {}",
    ),
    "it": (
        "Quale termine completa questa affermazione del documento: «{}»?",
        "Quali termini completano questa affermazione del documento (più risposte): «{}»?",
        "Vero o falso: «{}»?",
        "Il documento dice: «{}»",
        "Quiz: {}",
    ),
    "pt": (
        "Que termo completa esta afirmação do documento: «{}»?",
        "Que termos completam esta afirmação do documento (várias respostas): «{}»?",
        "Verdadeiro ou falso: «{}»?",
        "O documento diz: «{}»",
        "Questionário: {}",
    ),
    "nl": (
        'Welk begrip maakt deze uitspraak uit het document af: "{}"?',
        'Welke begrippen maken deze uitspraak uit het document af (meerdere antwoorden): "{}"?',
        'Waar of onwaar: "{}"?',
        'Het document zegt: "{}"',
        "Quiz: {}",
    ),
}
_LANGUAGE = re.compile(r"\(language code ([a-z]{2})\)")
_KINDS = re.compile(r"^Question kinds: ([a-z_, ]+)\.", re.MULTILINE)
KINDS = ("single", "multiple", "true_false")


def language_of(prompt_text: str, document: str) -> str:
    """The language the prompt asks for, else the document's, else English."""
    match = _LANGUAGE.search(prompt_text)
    if match and match.group(1) in WORDING:
        return match.group(1)
    detected = detect_language(document)
    return detected if detected in WORDING else "en"


def kinds_of(prompt_text: str) -> tuple[str, ...]:
    """The question kinds the prompt asks for (single when it names none)."""
    match = _KINDS.search(prompt_text)
    found = [k.strip() for k in match.group(1).split(",")] if match else []
    return tuple(k for k in found if k in KINDS) or ("single",)


def blank(sentence: str, term: str) -> str:
    """``sentence`` on one line with every whole-word ``term`` (any case) made a gap.

    Every occurrence: a gap beside the answer's own words gives it away (``answer_in_stem``).
    """
    pattern = rf"(?<![^\W_]){re.escape(term)}(?![^\W_])"
    return " ".join(re.sub(pattern, "_____", sentence, flags=re.IGNORECASE).split())


def stem(sentence: str, term: str, language: str) -> dict[str, str]:
    """Question text, explanation and quote of a single-answer question that blanks ``term``."""
    wording = WORDING[language]
    return {
        "question": wording[0].format(blank(sentence, term)),
        "explanation": wording[3].format(" ".join(sentence.split())),
        "source_quote": sentence,
    }


def multiple_question(
    document: Document, sentence: Sentence, options: int, rng: random.Random, rules: QuizRules, language: str
) -> dict[str, Any]:
    """Two terms of ``sentence`` blanked; they are the correct options among ``options``."""
    terms = list(dict.fromkeys(sentence.terms))
    first, second = rng.sample(terms, 2) if len(terms) >= 2 else (terms[0], f"{terms[0]}s")
    others = distractors(document, first, options - 2, rng, rules)
    others = [o for o in others if o.casefold() != second.casefold()][: options - 2]
    while len(others) < options - 2:
        others.append(f"Option {len(others) + 1}")
    where = sorted(rng.sample(range(options), 2))
    option_list, rest = [], iter(others)
    for i in range(options):
        option_list.append((first if i == where[0] else second) if i in where else next(rest))
    wording = WORDING[language]
    return {
        "kind": "multiple",
        "question": wording[1].format(blank(blank(sentence.text, first), second)),
        "options": option_list,
        "correct_answer_index": where[0],
        "correct_answer_text": option_list[where[0]],
        "correct_answer_indices": where,
        "explanation": wording[3].format(" ".join(sentence.text.split())),
        "source_quote": sentence.text,
    }


def true_false_question(
    document: Document, sentence: Sentence, rng: random.Random, rules: QuizRules, language: str
) -> dict[str, Any]:
    """The sentence as a claim: as written (true), or with one term swapped for another (false)."""
    claim = " ".join(sentence.text.split())
    true = rng.random() < 0.5
    if not true:
        term = rng.choice(list(sentence.terms))
        swap = distractors(document, term, 1, rng, rules)[0]
        claim = re.sub(rf"\b{re.escape(term)}\b", swap, claim, count=1)
        true = claim == " ".join(sentence.text.split())
    pair = list(TRUE_FALSE[language])
    wording = WORDING[language]
    index = 0 if true else 1
    return {
        "kind": "true_false",
        "question": wording[2].format(claim),
        "options": pair,
        "correct_answer_index": index,
        "correct_answer_text": pair[index],
        "correct_answer_indices": None,
        "explanation": wording[3].format(" ".join(sentence.text.split())),
        "source_quote": sentence.text,
    }
