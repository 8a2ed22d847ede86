"""Grounded quiz writing: questions from the document's sentences, options from its terms.

Full quizzes carry the model's structural bias (and, at the model's low rate, a repeated
question); surgical slice requests balance the one item they name at the model's slice fix rate for
the reasoning effort (``repair_skill``), ask a repeated question about another sentence when told
it is a duplicate, keep its correct answer's text (almost always), and follow that text when the
item's index disagrees with it. A whole question sometimes comes back with its options reordered.
A document with fewer sentences than questions is quizzed on clauses too before a sentence is
reused, as a model asks about several facts of one sentence; beyond that, questions repeat.
Questions follow the prompt's kinds and language (``quizkinds``: multiple-answer and true/false
questions, wording per language); only single-answer questions carry the length bias.
"""

from __future__ import annotations

import random
import re
from typing import Any

from suture.workers.simulator.bias import answer_positions, distractors, long_answer
from suture.workers.simulator.document import Document, Sentence, analyse, terms_of
from suture.workers.simulator.profiles import ModelTraits, Profile
from suture.workers.simulator.prompt import Prompt
from suture.workers.simulator.quizkinds import (
    WORDING,
    kinds_of,
    language_of,
    multiple_question,
    stem,
    true_false_question,
)
from suture.workers.simulator.repair_skill import slice_fix_rate
from suture.workers.simulator.stems import opening_plan, single_stem, with_habit, without_numbering

DEFAULT_QUESTIONS = 15
_QUESTION_ITEM = re.compile(r"^/questions/(\d+)(/options)?$")
_TITLE_HEAD_CHARS = 4096
_LINE_BREAK = re.compile(r"\r\n|[\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029]")  # where str.splitlines splits


def write_quiz(prompt: Prompt, traits: ModelTraits, profile: Profile, rng: random.Random) -> dict[str, Any]:
    """A whole quiz for the prompt's document, biased at the model's rates."""
    document = analyse(prompt.document)
    count = prompt.questions or DEFAULT_QUESTIONS
    options = prompt.options or profile.rules.options_per_question
    language, kinds = language_of(prompt.text, prompt.document), kinds_of(prompt.text)
    sentences = _pick_sentences(document, count, rng)
    positions = answer_positions(count, options, traits, rng)
    openings = opening_plan([s.text for s in sentences], traits, rng, language)
    questions = []
    for i, (sentence, position) in enumerate(zip(sentences, positions, strict=True)):
        kind = kinds[i % len(kinds)]
        if kind == "multiple" and options >= 3:
            questions.append(multiple_question(document, sentence, options, rng, profile.rules, language))
        elif kind == "true_false":
            questions.append(true_false_question(document, sentence, rng, profile.rules, language))
        else:
            biased = rng.random() < traits.imbalance_rate
            habit = rng.random() < traits.giveaway_rate
            questions.append(
                write_question(
                    document,
                    sentence,
                    position,
                    options,
                    biased,
                    rng,
                    profile,
                    language,
                    openings[i],
                    habit,
                )
            )
    for i in range(1, len(questions)):
        if rng.random() < traits.duplicate_rate:
            questions[i] = dict(questions[rng.randrange(i)])  # the model repeats itself
    title_words = _title_words(document.text)
    return {"title": WORDING[language][4].format(title_words), "questions": questions}


def _title_words(text: str) -> str:
    """The document's first line as plain words (no Markdown marks), its first 8 words at most.

    The line is read in the document's first few KB when its first 10 words are there (the first 9
    are then whole: enough to know the 8 and whether more follow), a huge document is not scanned.
    """
    words = _plain_words(_first_line(text[:_TITLE_HEAD_CHARS]))
    if len(words) < 10 and len(text) > _TITLE_HEAD_CHARS:
        words = _plain_words(_first_line(text))
    if not words:
        return "the document"
    return " ".join(words[:8]) + ("\u2026" if len(words) > 8 else "")


def _plain_words(line: str) -> list[str]:
    return re.sub(r"[#*_`>\[\]]+", " ", line).split()


def _first_line(text: str) -> str:
    """The first line of ``text`` that is not blank, as ``str.splitlines`` splits lines ("" if none).

    Lines are found one at a time, not all split first.
    """
    start = 0
    for end in _LINE_BREAK.finditer(text):
        line = text[start : end.start()]
        if line.strip():
            return line
        start = end.end()
    rest = text[start:]
    return rest if rest.strip() else ""


def write_question(
    document: Document,
    sentence: Sentence,
    position: int,
    options: int,
    biased: bool,
    rng: random.Random,
    profile: Profile,
    language: str = "en",
    opening: int = 0,
    habit: bool = False,
) -> dict[str, Any]:
    """One question that blanks a term of ``sentence``; ``biased`` makes its answer conspicuous.

    ``opening`` picks the stem's wording (``stems.OPENINGS``); a heading number glued before the
    sentence stays out of the quote, and ``habit`` gives the question one give-away (``stems``).
    """
    long_terms = [t for t in sentence.terms if 5 <= len(t) <= 14]
    term = rng.choice(long_terms or list(sentence.terms))
    others = distractors(document, term, options - 1, rng, profile.rules)
    correct = term
    if biased:
        correct = long_answer(term, sentence.text, max(len(o) for o in others), profile.rules, rng)
    option_list = [*others[:position], correct, *others[position:]]
    quote = without_numbering(sentence.text)
    question = {
        "kind": "single",
        "question": single_stem(quote, term, language, opening),
        "options": option_list,
        "correct_answer_index": position,
        "correct_answer_text": correct,
        "correct_answer_indices": None,
        "explanation": WORDING[language][3].format(" ".join(quote.split())),
        "source_quote": quote,
    }
    return with_habit(question, sentence.text, term, rng, language, opening) if habit else question


def write_slice(
    prompt: Prompt, traits: ModelTraits, profile: Profile, rng: random.Random, effort: str | None = None
) -> dict[str, Any]:
    """The ``{"value": ...}`` reply to a surgical request for one question or its options.

    The item is balanced at the model's slice fix rate for ``effort`` (``repair_skill``); a whole
    question sometimes comes back with its options reordered, the answer moving with its text.
    """
    document = analyse(prompt.document)
    match = _QUESTION_ITEM.match(prompt.slice_pointer or "")
    question = _current_question(prompt, int(match.group(1))) if match else None
    if match is None or question is None:
        # Not an item the simulator knows how to rewrite: hand the slice back unchanged.
        return {"value": prompt.slice_value}
    fixed = rng.random() < slice_fix_rate(traits, effort)
    drifted = rng.random() < profile.surgical_drift_rate
    options = _rewritten_options(document, question, fixed, drifted, rng, profile)
    if question.get("kind") in ("multiple", "true_false"):
        options = list(question["options"])  # several answers or a fixed pair: the options stay
    if match.group(2):
        return {"value": options}
    if fixed and "duplicate_question" in prompt.failure_codes:
        question = _asked_elsewhere(document, question, rng, language_of(prompt.text, prompt.document))
    if (
        question.get("kind") not in ("multiple", "true_false")
        and rng.random() < profile.question_reorder_rate
    ):
        rng.shuffle(options)
    index = options.index(question["correct_answer_text"])
    return {"value": {**question, "options": options, "correct_answer_index": index}}


def _asked_elsewhere(
    document: Document, question: dict[str, Any], rng: random.Random, language: str = "en"
) -> dict[str, Any]:
    """The question asked about another sentence or clause naming its answer (kept, as preserved).

    The blank is the answer's term: the answer itself, or its first word when the answer is a
    longer phrase built around the term (a biased answer). When no other sentence names it, the
    question is reworded around the words next to the term instead, as a model bound to keep the
    answer does: a rewording the shared-word duplicate rule does not flag (a documented limit).
    """
    correct = question["correct_answer_text"]
    words = correct.split()
    for term in dict.fromkeys([correct, words[0].strip(",.;:") if words else correct]):
        pattern = re.compile(rf"\b{re.escape(term)}\b") if term else None
        others = [
            s
            for s in _sentence_pool(document)
            if pattern and s.text != question.get("source_quote") and pattern.search(s.text)
        ]
        if others:
            return {**question, **stem(rng.choice(others).text, term, language)}
    quote = str(question.get("source_quote") or "")
    term = words[0].strip(",.;:") if words else correct
    if term and re.search(rf"\b{re.escape(term)}\b", quote):
        return {**question, "question": _reworded(quote, term)}
    return question  # nothing to reword it around: left as it is, the chain escalates


def _reworded(sentence: str, term: str) -> str:
    """A cloze on the few words around ``term`` in ``sentence``, worded unlike ``quizkinds.stem``'s."""
    tokens = sentence.split()
    at = next((i for i, token in enumerate(tokens) if re.search(rf"\b{re.escape(term)}\b", token)), 0)
    window = tokens[max(0, at - 4) : at + 5]
    gap = " ".join(window).replace(term, "_____", 1)
    return f'In the document\'s own words, which term fills the gap in "... {gap} ..."?'


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
    """The question being repaired, from the slice itself or from the item around it.

    An options slice's context is its question with the options elided: the slice fills them in.
    """
    context = prompt.context
    if isinstance(prompt.slice_value, list) and isinstance(context, dict) and "questions" not in context:
        context = {**context, "options": prompt.slice_value}
    for candidate in (prompt.slice_value, context):
        found = _question_in(candidate, number)
        if found is not None:
            return found
    return None


def _question_in(value: Any, number: int) -> dict[str, Any] | None:
    if isinstance(value, dict) and "questions" in value:
        value = value["questions"]
    if isinstance(value, list) and 0 <= number < len(value):
        value = value[number]
    if not isinstance(value, dict) or not isinstance(value.get("options"), list) or not value["options"]:
        return None
    options = [str(o) for o in value["options"]]
    index = value.get("correct_answer_index")
    text = value.get("correct_answer_text")
    at = (
        index
        if isinstance(index, int) and not isinstance(index, bool) and 0 <= index < len(options)
        else None
    )
    if text in options and (at is None or options[at] != text):
        at = options.index(text)  # index and answer text disagree: the text is what the answer is
    index = 0 if at is None else at
    return {**value, "options": options, "correct_answer_index": index, "correct_answer_text": options[index]}


def _pick_sentences(document: Document, count: int, rng: random.Random) -> list[Sentence]:
    sentences = list(document.sentences)
    if not sentences:
        text = document.text.strip() or "The document is empty."
        sentences = [Sentence(text, tuple(terms_of(text)) or ("document",))]
    if len(sentences) >= count:
        return [sentences[i] for i in sorted(rng.sample(range(len(sentences)), count))]
    clauses = list(document.clauses)
    if len(sentences) + len(clauses) >= count:
        return sentences + [
            clauses[i] for i in sorted(rng.sample(range(len(clauses)), count - len(sentences)))
        ]
    pool = sentences + clauses
    return [pool[i % len(pool)] for i in range(count)]


def _sentence_pool(document: Document) -> tuple[Sentence, ...]:
    return document.sentences + document.clauses
