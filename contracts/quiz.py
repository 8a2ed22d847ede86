"""The quiz contract: multiple-choice questions grounded in a source document, and their rules.

Rule codes are stable (docs/architecture.md); each failure points at the value to regenerate:

==========================  ===================================  =========================================
code                        pointer                              fails when
==========================  ===================================  =========================================
question_count              /questions                           not exactly ``questions`` items
empty_field                 /title, /questions/i/<field>,        a required text is blank
                            /questions/i/options/j
empty_question              /questions/i/question                the question text is blank
not_a_question              /questions/i/question                it does not end with "?" (configurable)
option_count                /questions/i/options                 not exactly ``options_per_question``
duplicate_options           /questions/i/options                 two options equal after case/space folding
all_none_of_the_above       /questions/i/options                 "all/none of the above" (configurable)
answer_index_out_of_range   /questions/i/correct_answer_index    index outside the options
answer_text_mismatch        /questions/i/correct_answer_text     text != options[index] (outer spaces aside)
imbalanced_options          /questions/i/options                 correct option conspicuously the longest
quote_not_in_source         /questions/i/source_quote            quote absent from the source (spaces folded)
answer_position_skew        /questions/i (each one to move)      a position holds too many correct answers
duplicate_question          /questions/i (the later one)         its stem repeats an earlier question's (same
                                                                 or nearly the same words; configurable)
empty_output                /                                    nothing, ``{}``, no questions, blank text
==========================  ===================================  =========================================

The give-away codes (``answer_in_stem``, ``long_blank_answer``, ``distractor_overlaps_answer``,
``section_number_in_text``, ``repeated_stem_opening``) are ``contracts.quiz_giveaways``'.

The codes of question kinds (``question_kind``, ``answer_set``, ``true_false_options``) are
``contracts.quiz_kinds``'; a true/false question has 2 options, and only single-answer questions count
for ``answer_position_skew`` and ``imbalanced_options``.

Thresholds are ``QuizRules`` (config/defaults.yaml); a job's parameters are ``quiz_params``' to resolve.
For ``answer_position_skew`` the questions to move are, per over-represented position, the *last*
ones holding it, just enough to bring its share within the limit: deterministic and minimal. That
code has a deterministic fixer (``fixers``, ``quiz_fixers``): the options are reordered, no model call.
For ``duplicate_question`` the later of two similar questions is the one to regenerate, so the
first wording stays; similarity is ``suture.contracts.similarity`` (shared words, threshold
``duplicate_stem_similarity``).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from typing import Any, ClassVar

from suture.config.settings import QuizRules, Settings
from suture.contracts.contract import SLICE_FRAME_TOKENS
from suture.contracts.errors import ContractDefinitionError
from suture.contracts.examples import estimate_tokens
from suture.contracts.failure import Failure
from suture.contracts.language import detect_language
from suture.contracts.quiz_example import canonical_quiz
from suture.contracts.quiz_giveaways import giveaway_failures, giveaway_instructions
from suture.contracts.quiz_kinds import expected_options, first_line, instruction_lines, kind_failures
from suture.contracts.quiz_model import Question, Quiz
from suture.contracts.quiz_params import resolve_quiz_params, with_detected_language
from suture.contracts.quiz_repair import QuizRepair
from suture.contracts.similarity import repeats
from suture.contracts.source import SourceText

# What a written question takes (stem, options, a sentence of explanation, a quoted sentence): the
# canonical example's questions are terser than the replies, which averaged 170-175 visible tokens a
# question in the simulator's quizzes (6 questions, 4 options: 1,020-1,060 tokens). The larger is used.
TOKENS_PER_QUESTION = 175

ALL_NONE_OF_THE_ABOVE = re.compile(
    r"\b(all|none|both|neither)\s+of\s+(the\s+)?(above|options|answers|choices)\b", re.IGNORECASE
)


class QuizContract(QuizRepair):
    """Exactly N questions of K options, each answer consistent, balanced and quoted from the source."""

    name = "quiz"
    title = "Quiz"
    output_model = Quiz
    default_policy: ClassVar[str | None] = "default"

    @classmethod
    def resolve_params(cls, params: Mapping[str, Any], settings: Settings | None) -> dict[str, Any]:
        """``{"questions": N, "rules": {...}}``: the job's values over the settings' quiz rules, checked."""
        return resolve_quiz_params(params, settings)

    @classmethod
    def params_for_source(cls, params: dict[str, Any], source: str) -> dict[str, Any]:
        """``language: auto`` made the source's language, so the job stores what it was asked in."""
        return with_detected_language(params, source)

    def __init__(
        self,
        questions: int = 15,
        source: str | None = None,
        rules: QuizRules | dict[str, Any] | None = None,
        avoid_questions: list[str] | None = None,
    ) -> None:
        if isinstance(questions, bool) or not isinstance(questions, int) or questions < 1:
            raise ContractDefinitionError(
                self.name, f"questions must be a whole number >= 1, got {questions!r}"
            )
        if source is not None and not isinstance(source, str):
            raise ContractDefinitionError(self.name, "source must be the document's text (a str) or None")
        try:
            self.rules = rules if isinstance(rules, QuizRules) else QuizRules.model_validate(rules or {})
        except ValueError as exc:
            raise ContractDefinitionError(self.name, f"invalid rules: {' '.join(str(exc).split())}") from exc
        self.questions = questions
        self.avoid_questions = list(avoid_questions or [])
        self.source = SourceText(source) if source is not None else None
        detected = detect_language(source) if source is not None else None
        self.language = self.rules.language if self.rules.language != "auto" else detected or "en"

    @property
    def options_per_question(self) -> int:
        """K, the number of options every question must have."""
        return self.rules.options_per_question

    def params(self) -> dict[str, Any]:
        """``{"questions": N, "rules": {...}}`` (and ``avoid_questions``); pass ``source=`` separately."""
        params: dict[str, Any] = {"questions": self.questions, "rules": self.rules.model_dump()}
        return params | ({"avoid_questions": self.avoid_questions} if self.avoid_questions else {})

    def is_empty(self, data: Any) -> bool:
        """Also empty: a quiz whose ``questions`` list is empty."""
        return super().is_empty(data) or (isinstance(data, dict) and data.get("questions") == [])

    def empty_message(self) -> str:
        """Say how many questions to write."""
        return f"The quiz is empty; write a title and exactly {self.questions} questions."

    def rule_failures(self, model: Any, data: Any) -> list[Failure]:
        """Every quiz rule, in document order: count, per-question rules, then position balance."""
        quiz: Quiz = model
        failures: list[Failure] = []
        if len(quiz.questions) != self.questions:
            failures.append(
                _rule(
                    "/questions",
                    "question_count",
                    f"The quiz has {len(quiz.questions)} questions; write exactly {self.questions}.",
                )
            )
        if not quiz.title.strip():
            failures.append(_rule("/title", "empty_field", "The title is blank; write a short title."))
        for index, question in enumerate(quiz.questions):
            failures += self._question_failures(index, question)
        failures += self._position_failures(quiz)
        failures += self._duplicate_failures(quiz)
        failures += giveaway_failures(quiz, self.rules)
        return failures

    def _question_failures(self, i: int, q: Question) -> list[Failure]:
        at = f"/questions/{i}"
        failures = [*_blank_fields(at, q)]
        if not q.question.strip():
            failures.append(
                _rule(f"{at}/question", "empty_question", "The question text is blank; write a question.")
            )
        elif self.rules.require_question_mark and not q.question.strip().endswith("?"):
            message = "The question does not end with a question mark; phrase it as a question."
            failures.append(_rule(f"{at}/question", "not_a_question", message))
        failures += self._option_failures(at, q)
        failures += self._answer_failures(at, q)
        failures += kind_failures(at, q, self.rules, self.language)
        if self.source is not None and q.source_quote.strip() and self.source.find(q.source_quote) is None:
            message = "The source_quote does not occur in the source document; copy a snippet verbatim."
            failures.append(_rule(f"{at}/source_quote", "quote_not_in_source", message))
        return failures

    def _option_failures(self, at: str, q: Question) -> list[Failure]:
        failures = []
        k = expected_options(q.kind, self.rules)
        if len(q.options) != k:
            message = f"The question has {len(q.options)} options; write exactly {k}."
            failures.append(_rule(f"{at}/options", "option_count", message))
        folded = [_fold(option) for option in q.options if option.strip()]
        if len(set(folded)) != len(folded):
            message = "Two options are the same (ignoring case and spacing); make every option distinct."
            failures.append(_rule(f"{at}/options", "duplicate_options", message))
        if self.rules.forbid_all_none_of_the_above and any(
            ALL_NONE_OF_THE_ABOVE.search(o) for o in q.options
        ):
            message = 'An option says "all/none of the above"; replace it with a concrete answer.'
            failures.append(_rule(f"{at}/options", "all_none_of_the_above", message))
        return failures

    def _answer_failures(self, at: str, q: Question) -> list[Failure]:
        index = q.correct_answer_index
        if not 0 <= index < len(q.options):
            message = (
                f"correct_answer_index {index} is not an index of the {len(q.options)} options (0-based)."
            )
            return [_rule(f"{at}/correct_answer_index", "answer_index_out_of_range", message)]
        failures = []
        correct = q.options[index]
        if q.correct_answer_text.strip() != correct.strip():
            message = (
                f"correct_answer_text differs from option {index} ({_clip(correct)}); copy that option "
                "verbatim."
            )
            failures.append(_rule(f"{at}/correct_answer_text", "answer_text_mismatch", message))
        distractors = [len(o.strip()) for j, o in enumerate(q.options) if j != index]
        if q.kind == "single" and distractors and self._conspicuous(len(correct.strip()), max(distractors)):
            message = (
                f"The correct option ({len(correct.strip())} chars) is much longer than every distractor "
                f"(longest {max(distractors)} chars); make all options similar in length and detail."
            )
            failures.append(_rule(f"{at}/options", "imbalanced_options", message))
        return failures

    def _conspicuous(self, correct_chars: int, longest_distractor_chars: int) -> bool:
        excess = correct_chars - longest_distractor_chars
        ratio_exceeded = correct_chars > self.rules.max_correct_length_ratio * longest_distractor_chars
        return ratio_exceeded and excess >= self.rules.min_correct_length_excess_chars

    def _position_failures(self, quiz: Quiz) -> list[Failure]:
        total = sum(q.kind == "single" for q in quiz.questions)
        if total < self.rules.min_questions_for_position_rule:
            return []
        # The epsilon keeps shares like 0.57 * 100 = 56.999... from losing a whole question.
        allowed = math.floor(self.rules.max_answer_position_share * total + 1e-9)
        holders: dict[int, list[int]] = {}
        for i, q in enumerate(quiz.questions):
            if q.kind == "single" and 0 <= q.correct_answer_index < len(q.options):
                holders.setdefault(q.correct_answer_index, []).append(i)
        to_move: list[tuple[int, int, int]] = []
        for position, indices in holders.items():
            if len(indices) > allowed:
                to_move += [(i, position, len(indices)) for i in indices[allowed:]]
        return [
            _rule(
                f"/questions/{i}",
                "answer_position_skew",
                f"Option {position + 1} is correct in {count} of {total} questions (at most {allowed} "
                "allowed); "
                "put this question's correct answer at another position.",
            )
            for i, position, count in sorted(to_move)
        ]

    def _duplicate_failures(self, quiz: Quiz) -> list[Failure]:
        if not self.rules.forbid_duplicate_questions:
            return []
        stems = [q.question for q in quiz.questions]
        found = repeats(stems, self.rules.duplicate_stem_similarity)
        return [
            _rule(
                f"/questions/{r.later}",
                "duplicate_question",
                f"This question {'repeats' if r.exact else 'nearly repeats'} question {r.earlier + 1} "
                f"({_clip(stems[r.earlier])}); ask about a different point of the document.",
            )
            for r in found
        ]

    def task_instructions(self) -> str:
        """The quiz task; the first sentence is the fixed phrase the simulator parses."""
        lines = [
            first_line(self.questions, self.rules),
            "Every question ends with a question mark and is answerable from the document alone.",
            "correct_answer_index is 0-based and correct_answer_text repeats that option verbatim.",
            "Make all options of a question similar in length and detail; the correct one must not stand "
            "out.",
            "Spread the correct answers over the option positions.",
            "Every question asks about a different point; never repeat or reword an earlier question.",
            "source_quote is a verbatim snippet of the document that supports the answer.",
        ]
        if self.rules.forbid_all_none_of_the_above:
            lines.append('Never use "all of the above" or "none of the above".')
        lines += giveaway_instructions(self.rules)
        lines += instruction_lines(self.rules, self.language, self.avoid_questions)
        return "\n".join(lines)

    def canonical_example(self) -> dict[str, Any]:
        """A realistic, valid two-question quiz about ``suture.contracts.quiz_example.EXAMPLE_SOURCE``."""
        return canonical_quiz(self.options_per_question, self.rules.question_kinds, self.language)

    def reply_tokens(self, output: Any = None, pointer: str | None = None) -> int:
        """Questions x tokens per question (the canonical example's average) for a whole quiz or
        ``/questions``;
        one question's worth for ``/questions/i``; the replaced value's size for anything smaller."""
        example = self.canonical_example()
        average = math.ceil(estimate_tokens(json.dumps(example["questions"])) / len(example["questions"]))
        per_question = max(average, TOKENS_PER_QUESTION)
        if pointer is None or pointer == "/questions":
            return (
                estimate_tokens(json.dumps(example["title"]))
                + SLICE_FRAME_TOKENS
                + self.questions * per_question
            )
        if re.fullmatch(r"/questions/\d+", pointer):
            return SLICE_FRAME_TOKENS + max(per_question, super().reply_tokens(output, pointer))
        return super().reply_tokens(output, pointer)

    def schema_template(self) -> dict[str, Any]:
        """The schema template with ``options_per_question`` option placeholders."""
        template = super().schema_template()
        kind = self.rules.question_kinds[0]
        for question in template["questions"]:
            question["kind"] = kind
            question["options"] = [f"<option {j + 1}>" for j in range(expected_options(kind, self.rules))]
            question["correct_answer_text"] = "<option 1>"
            question["correct_answer_indices"] = [0, 1] if kind == "multiple" else None
        return template


def _blank_fields(at: str, q: Question) -> list[Failure]:
    failures = []
    for field in ("correct_answer_text", "explanation", "source_quote"):
        if not getattr(q, field).strip():
            failures.append(_rule(f"{at}/{field}", "empty_field", f"The {field} is blank; fill it in."))
    for j, option in enumerate(q.options):
        if not option.strip():
            failures.append(
                _rule(f"{at}/options/{j}", "empty_field", "This option is blank; write an answer.")
            )
    return failures


def _fold(text: str) -> str:
    return " ".join(text.split()).casefold()


def _clip(text: str, limit: int = 80) -> str:
    return repr(text if len(text) <= limit else text[: limit - 3] + "...")


def _rule(pointer: str, code: str, message: str) -> Failure:
    return Failure(kind="rule", pointer=pointer, code=code, message=message)
