"""A person's conclusions on a batch's quiz, written to its output folder: accept it, or edit one question.

Both go to ``quizzes.jsonl`` (the job's line only, every other line unchanged) and to the ledger
(``accepted`` / ``edited`` events), so a rerun keeps the quiz and never regenerates it. An edit is
validated against the job's contract (its stored rules and its section's text) at once: the line's
status and failures say what the contract thinks of it. An edited question's source quote is
re-checked against its section (``supporting_quote``): kept while it names the answer, else
replaced by a sentence that does, else cleared (and reported). Targeted regeneration is
``suture.workers.batch.regenerate``'s. Errors are ``RegenerateError`` (one line for the user).
"""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from suture.config.settings import Settings
from suture.contracts.quiz_giveaways import contains_words
from suture.tasks.job import contract_for
from suture.workers.batch.ledger import quiz_sha256
from suture.workers.batch.regenerate import RegenerateError, Regeneration

MAX_FIELD_CHARS = 4000
_SENTENCE = re.compile(r"[^.!?\n]+[.!?]?")
_WORD = re.compile(r"[^\W\d_]+")


def supporting_quote(question: dict[str, Any], section: str) -> str:
    """The quote an edited question keeps: its own while it names the answer, else a sentence that does.

    Called when an edit changes the answer: a quote about something else would then be exported as the
    answer's source. When the old quote does not name the new answer, the first sentence of the
    section that does becomes the quote; when none does, the quote is cleared, so the contract
    reports the blank source_quote and the quiz is soft-delivered until someone grounds it.
    """
    answer = str(question.get("correct_answer_text") or "")
    quote = str(question.get("source_quote") or "")
    if not answer.strip() or question.get("kind") == "true_false" or _names(quote, answer):
        return quote
    for found in _SENTENCE.finditer(section):
        sentence = found.group(0).strip()
        if _names(sentence, answer):
            return sentence
    return ""


def _names(text: str, answer: str) -> bool:
    """True if ``text`` names ``answer``: the whole phrase, or at least half of its words of 4+ letters."""
    if contains_words(text, answer):
        return True
    words = {w.casefold() for w in _WORD.findall(answer) if len(w) >= 4}
    return bool(words) and sum(contains_words(text, w) for w in words) * 2 >= len(words)


@dataclass(frozen=True)
class QuestionEdit:
    """A question as a person rewrote it: stem, options (in order), which is correct, explanation."""

    question: str
    options: list[str]
    correct_index: int
    explanation: str


def accept_quiz(out_dir: Path, job_id: str, settings: Settings) -> dict[str, Any]:
    """Mark the quiz accepted as it stands (``delivered``, ``accepted: true``); returns its new line."""
    regeneration = Regeneration.load(out_dir, job_id, settings)
    line = regeneration.update_line({"status": "delivered", "accepted": True})
    sha = quiz_sha256(line["quiz"])
    regeneration.record("accepted", {"status": "delivered", "output_sha256": sha, "source": line["source"]})
    return line


def edit_question(
    out_dir: Path, job_id: str, index: int, edit: QuestionEdit, settings: Settings
) -> dict[str, Any]:
    """Replace question ``index`` with the person's version, validated; returns the quiz's new line."""
    regeneration = Regeneration.load(out_dir, job_id, settings)
    best = regeneration.state.best
    assert best is not None
    quiz = copy.deepcopy(best.output)
    questions = quiz.get("questions") or []
    if not 0 <= index < len(questions):
        raise RegenerateError(f"the quiz has no question {index + 1}")
    options = [o.strip() for o in edit.options if o.strip()]
    if not edit.question.strip() or not options or not 0 <= edit.correct_index < len(options):
        raise RegenerateError("a question needs its text, its options and a correct option among them")
    if max(len(edit.question), len(edit.explanation), *map(len, options)) > MAX_FIELD_CHARS:
        raise RegenerateError(f"a field of the question is longer than {MAX_FIELD_CHARS} characters")
    question = dict(questions[index])
    question |= {
        "question": edit.question.strip(),
        "options": options,
        "correct_answer_index": edit.correct_index,
    }
    question |= {"correct_answer_text": options[edit.correct_index], "explanation": edit.explanation.strip()}
    if question["correct_answer_text"] != questions[index].get("correct_answer_text"):  # a new answer
        question["source_quote"] = supporting_quote(question, regeneration.state.spec.source)
    questions[index] = question
    verdict = contract_for(regeneration.state.spec).validate(quiz)
    failures = [f.public() for f in verdict.failures]
    status = "delivered" if verdict.ok else "soft_delivered"
    line = regeneration.update_line({"quiz": quiz, "status": status, "failures": failures, "edited": True})
    record = {"status": status, "output_sha256": quiz_sha256(quiz), "output": quiz, "failures": failures}
    regeneration.record("edited", record | {"source": line["source"]})
    return line
