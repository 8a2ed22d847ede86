"""A re-ask: the model's earlier whole output comes back with feedback, and the model writes it again.

Real repair loops re-ask in two shapes, and the simulator hears both:

- messages holding an earlier assistant output (a quiz) followed by user messages with feedback
  (Instructor's and pydantic-ai's retries, any chat the user continues);
- one user message holding ``<previous_output>`` and the feedback after it (suture's ``full``
  attempts with feedback, ``tasks.prompts.retry_prompt``).

Feedback names items the ways validators do: JSON Pointers (``/questions/3``), dotted or bracket
paths (``questions.3``, ``questions[3]``), pydantic locations (``('questions', 3, ...)``,
``"loc": ["questions", 3]``) and words (``question 4``, counted from 1). Each named item is fixed at
the re-ask fix rate (``reask_skill``) and otherwise comes back as it was, failure and all (a model's
habit winning again, as for an unfixed slice); each unnamed item is copied at ``ReaskSkill.keep_rate``
and otherwise drawn afresh at the model's bias. Feedback that names no item (a plain "try
again") redraws the whole output, as every new prompt draws afresh (``bias``). An earlier output
with another number of questions than the prompt asks for (or more than ``MAX_QUESTIONS``) is not
worth keeping: redrawn whole too.
"""

from __future__ import annotations

import json
import random
import re
from dataclasses import dataclass
from typing import Any

from suture.workers.simulator.bias import answer_positions
from suture.workers.simulator.document import Document, Sentence, analyse, terms_of
from suture.workers.simulator.profiles import ModelTraits, Profile
from suture.workers.simulator.prompt import MAX_QUESTIONS, Prompt, message_text
from suture.workers.simulator.quizgen import DEFAULT_QUESTIONS, write_question, write_quiz
from suture.workers.simulator.quizkinds import (
    WORDING,
    kinds_of,
    language_of,
    multiple_question,
    true_false_question,
)
from suture.workers.simulator.reask_skill import reask_fix_rate, reask_keep_rate

_PREVIOUS = re.compile(r"<previous_output>\s*(.*?)\s*</previous_output>(.*)", re.DOTALL)
_ZERO_BASED = (
    re.compile(r"/questions/(\d+)"),
    re.compile(r"\bquestions\s*(?:\.|\[)\s*(\d+)"),
    re.compile(r"""['"]questions['"]\s*,\s*(\d+)"""),
)
_ONE_BASED = re.compile(r"\bquestion\s*(?:#|no\.?\s*|number\s*)?(\d+)\b", re.IGNORECASE)


@dataclass(frozen=True)
class Reask:
    """An earlier quiz, the feedback on it, and the question indices (from 0) the feedback names."""

    previous: dict[str, Any]
    feedback: str
    named: frozenset[int]


def read_reask(messages: list[dict[str, Any]]) -> Reask | None:
    """The re-ask these messages make, or None when they hold no earlier quiz with feedback after it."""
    for at in range(len(messages) - 1, -1, -1):
        message = messages[at]
        text = message_text(message.get("content"))
        if message.get("role") == "assistant":
            previous = _quiz(text)
            after = [message_text(m.get("content")) for m in messages[at + 1 :] if m.get("role") == "user"]
            if previous is not None and any(t.strip() for t in after):
                return _reask(previous, "\n".join(after))
            return None
        match = _PREVIOUS.search(text) if message.get("role") == "user" else None
        if match and (previous := _quiz(match.group(1))) is not None:
            return _reask(previous, match.group(2))
    return None


def named_items(feedback: str) -> frozenset[int]:
    """The question indices (from 0) that ``feedback`` names, in any of the understood forms."""
    found = {int(m.group(1)) for pattern in _ZERO_BASED for m in pattern.finditer(feedback)}
    found |= {int(m.group(1)) - 1 for m in _ONE_BASED.finditer(feedback) if int(m.group(1)) >= 1}
    return frozenset(found)


def write_reask(
    prompt: Prompt,
    reask: Reask,
    traits: ModelTraits,
    profile: Profile,
    rng: random.Random,
    effort: str | None = None,
) -> dict[str, Any]:
    """The quiz written again: named items fixed at the fix rate, the others kept at the keep rate."""
    previous = [q for q in reask.previous["questions"] if isinstance(q, dict)]
    count = prompt.questions or len(previous) or DEFAULT_QUESTIONS
    named = {i for i in reask.named if 0 <= i < count}
    if not named or len(previous) != count or count > MAX_QUESTIONS:
        return write_quiz(prompt, traits, profile, rng)
    fix_rate = reask_fix_rate(traits, effort, profile.reask)
    keep_rate = reask_keep_rate(traits, profile.reask)
    # A named item is fixed at the fix rate, else it comes back as it was, failure and all (the model's
    # habit winning again, as for an unfixed slice: ``quizgen.write_slice``); an unnamed one is copied at
    # the keep rate, else drawn afresh at the model's bias.
    fixed = [i in named and rng.random() < fix_rate for i in range(count)]
    stays = [
        (i in named and not fixed[i]) or (i not in named and rng.random() < keep_rate) for i in range(count)
    ]
    writer = _ItemWriter(prompt, traits, profile, rng, count)
    used = {str(q.get("source_quote")) for q, stay in zip(previous, stays, strict=True) if stay}
    questions: list[dict[str, Any]] = []
    for i, question in enumerate(previous):
        if stays[i]:
            questions.append(question)
            continue
        item = writer.item(i, question, biased=not fixed[i], used=used)
        if not fixed[i] and questions and rng.random() < traits.duplicate_rate:
            # A fresh draw repeats an earlier question as often as a first attempt does.
            item = dict(questions[rng.randrange(len(questions))])
        used.add(str(item.get("source_quote")))
        questions.append(item)
    title = reask.previous.get("title")
    if not isinstance(title, str) or not title.strip():
        title_words = " ".join(writer.document.text.split()[:6]) or "the document"
        title = WORDING[writer.language][4].format(title_words)  # as a first attempt titles it
    return {"title": title, "questions": questions}


class _ItemWriter:
    """Writes one question afresh, about a sentence no kept question uses (a real rewrite avoids repeats)."""

    def __init__(self, prompt: Prompt, traits: ModelTraits, profile: Profile, rng: random.Random, count: int):
        self.document: Document = analyse(prompt.document)
        self.options = prompt.options or profile.rules.options_per_question
        self.language = language_of(prompt.text, prompt.document)
        self.kinds = kinds_of(prompt.text)
        self.positions = answer_positions(count, self.options, traits, rng)
        self.traits, self.profile, self.rng = traits, profile, rng

    def item(self, index: int, earlier: dict[str, Any], *, biased: bool, used: set[str]) -> dict[str, Any]:
        """Question ``index`` again: unbiased when fixed, at the model's bias when drawn afresh."""
        sentence = self._sentence(str(earlier.get("source_quote")), used)
        kind = self.kinds[index % len(self.kinds)]
        rules, rng = self.profile.rules, self.rng
        if kind == "multiple" and self.options >= 3:
            return multiple_question(self.document, sentence, self.options, rng, rules, self.language)
        if kind == "true_false":
            return true_false_question(self.document, sentence, rng, rules, self.language)
        biased = biased and rng.random() < self.traits.imbalance_rate
        position = self.positions[index]
        return write_question(
            self.document, sentence, position, self.options, biased, rng, self.profile, self.language
        )

    def _sentence(self, own_quote: str, used: set[str]) -> Sentence:
        pool = list(self.document.sentences + self.document.clauses)
        if not pool:
            text = self.document.text.strip() or "The document is empty."
            return Sentence(text, tuple(terms_of(text)) or ("document",))
        own = [s for s in pool if s.text == own_quote and s.text not in used]
        free = [s for s in pool if s.text not in used]
        return own[0] if own else self.rng.choice(free or pool)


def _reask(previous: dict[str, Any], feedback: str) -> Reask:
    return Reask(previous, feedback, named_items(feedback))


def _quiz(text: str) -> dict[str, Any] | None:
    try:
        value = json.loads(text)
    except ValueError:
        return None
    if isinstance(value, dict) and isinstance(value.get("questions"), list):
        return value
    return None
