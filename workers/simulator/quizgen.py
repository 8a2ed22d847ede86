"""Grounded quiz writing: questions from the document's sentences, options from its terms.

Full quizzes carry the model's structural bias; surgical slice requests balance the one item
they name (most of the time) and keep its correct answer (almost always).
"""

from __future__ import annotations

import random
import re
from typing import Any

from workers.simulator.bias import answer_positions, distractors, long_answer
from workers.simulator.document import Document, Sentence, analyse, terms_of
from workers.simulator.profiles import ModelTraits, Profile
from workers.simulator.prompt import Prompt

DEFAULT_QUESTIONS = 15
_QUESTION_ITEM = re.compile(r"^/questions/(\d+)(/options)?$")


def write_quiz(prompt: Prompt, traits: ModelTraits, profile: Profile, rng: random.Random) -> dict[str, Any]:
    """A whole quiz for the prompt's document, biased at the model's rates."""
    document = analyse(prompt.document)
    count = prompt.questions or DEFAULT_QUESTIONS
    options = prompt.options or profile.rules.options_per_question
    sentences = _pick_sentences(document, count, rng)
    positions = answer_positions(count, options, traits, rng)
    questions = [
        write_question(document, s, p, options, rng.random() < traits.imbalance_rate, rng, profile)
        for s, p in zip(sentences, positions, strict=True)
    ]
    title_words = " ".join(document.text.split()[:6]) or "the document"
    return {"title": f"Quiz: {title_words}", "questions": questions}


def write_question(
    document: Document,
    sentence: Sentence,
    position: int,
    options: int,
    biased: bool,
    rng: random.Random,
    profile: Profile,
) -> dict[str, Any]:
    """One question that blanks a term of ``sentence``; ``biased`` makes its answer conspicuous."""
    long_terms = [t for t in sentence.terms if 5 <= len(t) <= 14]
    term = rng.choice(long_terms or list(sentence.terms))
    blanked = re.sub(rf"\b{re.escape(term)}\b", "_____", sentence.text, count=1)
    others = distractors(document, term, options - 1, rng, profile.rules)
    correct = term
    if biased:
        correct = long_answer(term, sentence.text, max(len(o) for o in others), profile.rules, rng)
    option_list = [*others[:position], correct, *others[position:]]
    return {
        "question": f'Which term completes this statement from the document: "{" ".join(blanked.split())}"?',
        "options": option_list,
        "correct_answer_index": position,
        "correct_answer_text": correct,
        "explanation": f'The document says: "{" ".join(sentence.text.split())}"',
        "source_quote": sentence.text,
    }


def write_slice(prompt: Prompt, traits: ModelTraits, profile: Profile, rng: random.Random) -> dict[str, Any]:
    """The ``{"value": ...}`` reply to a surgical request for one question or its options."""
    document = analyse(prompt.document)
    match = _QUESTION_ITEM.match(prompt.slice_pointer or "")
    question = _current_question(prompt, int(match.group(1))) if match else None
    if match is None or question is None:
        # Not an item the simulator knows how to rewrite: hand the slice back unchanged.
        return {"value": prompt.slice_value}
    fixed = rng.random() < profile.surgical_fix_rate
    drifted = rng.random() < profile.surgical_drift_rate
    options = _rewritten_options(document, question, fixed, drifted, rng, profile)
    if match.group(2):
        return {"value": options}
    index = options.index(question["correct_answer_text"]) if drifted else question["correct_answer_index"]
    return {"value": {**question, "options": options, "correct_answer_index": index}}


def _rewritten_options(
    document: Document,
    question: dict[str, Any],
    fixed: bool,
    drifted: bool,
    rng: random.Random,
    profile: Profile,
) -> list[str]:
    correct = question["correct_answer_text"]
    index = question["correct_answer_index"]
    count = max(len(question["options"]), 2)
    others = [o for o in question["options"] if o != correct][: count - 1]
    if fixed or len(others) < count - 1:
        # An unfixed item keeps the distractors it had, and with them its imbalance.
        others = distractors(document, correct, count - 1, rng, profile.rules)
    if drifted:
        index = (index + 1) % count
    index = min(index, count - 1)
    return [*others[:index], correct, *others[index:]]


def _current_question(prompt: Prompt, number: int) -> dict[str, Any] | None:
    """The question being repaired, from the slice itself or from its context."""
    for candidate in (prompt.slice_value, prompt.context):
        found = _question_in(candidate, number)
        if found is not None:
            return found
    return None


def _question_in(value: Any, number: int) -> dict[str, Any] | None:
    if isinstance(value, dict) and "questions" in value:
        value = value["questions"]
    if isinstance(value, list) and 0 <= number < len(value):
        value = value[number]
    if not isinstance(value, dict) or not isinstance(value.get("options"), list):
        return None
    options = [str(o) for o in value["options"]]
    index = value.get("correct_answer_index")
    text = value.get("correct_answer_text")
    if not isinstance(index, int) or not 0 <= index < len(options):
        index = options.index(text) if text in options else 0
    if not options:
        return None
    return {**value, "options": options, "correct_answer_index": index, "correct_answer_text": options[index]}


def _pick_sentences(document: Document, count: int, rng: random.Random) -> list[Sentence]:
    sentences = list(document.sentences)
    if not sentences:
        text = document.text.strip() or "The document is empty."
        sentences = [Sentence(text, tuple(terms_of(text)) or ("document",))]
    if len(sentences) >= count:
        return [sentences[i] for i in sorted(rng.sample(range(len(sentences)), count))]
    return [sentences[i % len(sentences)] for i in range(count)]
