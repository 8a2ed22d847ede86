"""How a quiz is repaired: what a slice must keep, the smallest slice that can fix a failure, the fix
that needs no model, and what a slice prompt shows of the quiz and its source.

``QuizContract`` (``contracts.quiz``: what a valid quiz is) inherits these from ``QuizRepair``:

- Invariants by target kind (``contracts.invariants``): a whole question (``/questions/i``) keeps its
  ``correct_answer_text`` (its options may be reordered, the index moving with the text); an option
  list (``/questions/i/options``) keeps the correct option's text at the question's
  ``correct_answer_index`` (``correct_option``: the pointer depends on the output).
- ``repair_target``: a question's answer fields (``correct_answer_index``, ``correct_answer_text``,
  ``correct_answer_indices``) and its ``kind`` are repaired with the whole question, since a slice of the
  index or the text alone could pick
  another answer that nothing checks; one option (``/questions/i/options/j``) with its option list,
  so the list's invariant holds. Every other failure is repaired where it points.
- ``fixers``: ``answer_position_skew`` is fixed by reordering options (``contracts.quiz_fixers``).
- Slice context: the question around the slice; the source excerpt: the question's quote with
  ~400 characters around it (none when the quote is not in the source: the slice then gets the
  whole document).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any, ClassVar

from suture.config.settings import QuizRules
from suture.contracts.contract import Contract
from suture.contracts.failure import Failure
from suture.contracts.fixer import Fixer
from suture.contracts.pointer import exists, get, parent, parse_pointer
from suture.contracts.quiz_fixers import fix_answer_position_skew
from suture.contracts.source import SourceText

EXCERPT_MARGIN_CHARS = 200  # each side of the quote: ~400 characters of surroundings in all
CORRECT_OPTION = "correct_option"  # the invariant of an options slice (``resolve_invariant``)
ANSWER_FIELDS = frozenset({"kind", "correct_answer_index", "correct_answer_text", "correct_answer_indices"})


class QuizRepair(Contract):
    """The repair side of the quiz contract (its subclass ``QuizContract`` says what is valid)."""

    rules: QuizRules
    source: SourceText | None
    invariants: ClassVar[Mapping[str, tuple[str, ...]]] = {
        "/questions/*": ("correct_answer_text",),
        "/questions/*/options": (CORRECT_OPTION,),
    }

    def resolve_invariant(self, name: str, target: str, output: Any) -> list[str]:
        """``correct_option`` of an options slice: the option at the question's ``correct_answer_index``."""
        if name != CORRECT_OPTION:
            return super().resolve_invariant(name, target, output)
        question = get(output, parent(target)) if exists(output, parent(target)) else None
        if not isinstance(question, dict):
            return []
        options, index = question.get("options"), question.get("correct_answer_index")
        if isinstance(index, bool) or not isinstance(index, int) or not isinstance(options, list):
            return []
        return [f"{target}/{index}"] if 0 <= index < len(options) else []

    def repair_target(self, failure: Failure) -> str:
        """The whole question for its answer fields, the option list for one option, else the pointer."""
        tokens = parse_pointer(failure.pointer)
        if len(tokens) < 3 or tokens[0] != "questions" or not tokens[1].isdigit():
            return failure.pointer
        question = f"/questions/{tokens[1]}"
        if tokens[2] in ANSWER_FIELDS:
            return question
        if tokens[2] == "options" and len(tokens) > 3:
            return f"{question}/options"
        return failure.pointer

    def fixers(self) -> Mapping[str, Fixer]:
        """``answer_position_skew`` needs no model: the options are reordered (``quiz_fixers``)."""
        return {"answer_position_skew": functools.partial(fix_answer_position_skew, rules=self.rules)}

    def slice_context(self, output: Any, pointer: str) -> dict[str, Any]:
        """Inside a question, the context is the whole question (``/questions/3/options`` ->
        ``/questions/3``)."""
        question = question_pointer(pointer)
        if question is not None and exists(output, question):
            return {"parent_pointer": question, "parent": get(output, question)}
        return super().slice_context(output, pointer)

    def source_excerpt(self, output: Any, pointer: str) -> str | None:
        """The question's source_quote found in the source, with ~400 characters around it."""
        question = question_pointer(pointer)
        if self.source is None or question is None or not exists(output, question):
            return None
        quote = get(output, question)
        quote = quote.get("source_quote") if isinstance(quote, dict) else None
        if not isinstance(quote, str) or not quote.strip():
            return None
        return self.source.excerpt(quote, EXCERPT_MARGIN_CHARS)


def question_pointer(pointer: str) -> str | None:
    """``/questions/i`` for any pointer inside question ``i`` (None outside the questions)."""
    tokens = parse_pointer(pointer)
    if len(tokens) >= 2 and tokens[0] == "questions" and tokens[1].isdigit():
        return f"/questions/{tokens[1]}"
    return None
