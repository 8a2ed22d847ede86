"""The quiz's question kinds and teaching knobs: the rules each kind adds, and what the prompt asks.

Rule codes (pointers as in ``contracts.quiz``):

==================  ===================================  ==================================================
code                pointer                              fails when
==================  ===================================  ==================================================
question_kind       /questions/i/kind                    the kind is not one of the job's ``question_kinds``
answer_set          /questions/i/correct_answer_indices  multiple: not >= 2 distinct correct options in
                                                         range, at least one wrong one, holding
                                                         ``correct_answer_index``; other kinds: not null
true_false_options  /questions/i/options                 true_false: not exactly the pair True, False (in
                                                         the quiz's language, or English), in that order
==================  ===================================  ==================================================

A true/false question has 2 options whatever ``options_per_question`` says (``option_count`` checks
that). ``instruction_lines`` states the kinds, the language, the difficulty, the audience and the
questions to avoid; the first sentence of the quiz's instructions stays the fixed phrase
("Write exactly N questions, each with exactly K options") the simulator parses.
"""

from __future__ import annotations

from collections.abc import Sequence

from suture.config.settings import QuizRules
from suture.contracts.failure import Failure
from suture.contracts.language import TRUE_FALSE, language_name
from suture.contracts.quiz_model import Question

DIFFICULTY = {
    "easy": "easy: ask about facts the document states directly (recall), in plain words.",
    "medium": "medium: ask the learner to relate or explain facts of the document, not only recall them.",
    "hard": "hard: ask questions that combine two facts of the document or apply one to a case, "
    "still answerable from the document alone; make the distractors plausible to a learner.",
}


def expected_options(kind: str, rules: QuizRules) -> int:
    """How many options a question of ``kind`` has."""
    return 2 if kind == "true_false" else rules.options_per_question


def true_false_pair(language: str) -> tuple[str, str]:
    """The two options of a true/false question in ``language`` (English when it has none)."""
    return TRUE_FALSE.get(language, TRUE_FALSE["en"])


def kind_failures(at: str, q: Question, rules: QuizRules, language: str) -> list[Failure]:
    """The rules of a question's kind: allowed kind, its correct answers, true/false options."""
    failures = []
    if q.kind not in rules.question_kinds:
        allowed = ", ".join(rules.question_kinds)
        message = f"The question's kind is {q.kind!r}; this quiz asks only {allowed} questions."
        failures.append(_rule(f"{at}/kind", "question_kind", message))
    problem = _answer_set_problem(q)
    if problem is not None:
        failures.append(_rule(f"{at}/correct_answer_indices", "answer_set", problem))
    if q.kind == "true_false":
        pair = true_false_pair(language)
        folded = tuple(" ".join(o.split()).casefold() for o in q.options)
        if folded not in {_fold(pair), _fold(TRUE_FALSE["en"])}:
            message = f"A true/false question's options are exactly {list(pair)}, in that order."
            failures.append(_rule(f"{at}/options", "true_false_options", message))
    return failures


def _answer_set_problem(q: Question) -> str | None:
    indices = q.correct_answer_indices
    if q.kind != "multiple":
        return (
            None
            if indices is None
            else "correct_answer_indices is for multiple-answer questions; set it to null."
        )
    if indices is None:
        return "A multiple-answer question lists every correct option's index in correct_answer_indices."
    count = len(q.options)
    if len(set(indices)) != len(indices) or not all(0 <= i < count for i in indices):
        return f"correct_answer_indices must be distinct indices of the {count} options (0-based)."
    if not 2 <= len(indices) < count:
        return (
            "A multiple-answer question has at least 2 correct options and at least 1 wrong one "
            f"({len(indices)} of {count} marked correct)."
        )
    if q.correct_answer_index not in indices:
        return "correct_answer_indices must include correct_answer_index."
    return None


def first_line(questions: int, rules: QuizRules) -> str:
    """The instructions' fixed first sentence (the simulator parses N and K out of it)."""
    kinds = rules.question_kinds
    k = 2 if kinds == ["true_false"] else rules.options_per_question
    tail = " (true/false questions: exactly 2)" if "true_false" in kinds and kinds != ["true_false"] else ""
    return f"Write exactly {questions} questions, each with exactly {k} options{tail}."


def instruction_lines(rules: QuizRules, language: str, avoid: Sequence[str]) -> list[str]:
    """What the knobs ask of the quiz: kinds, language, difficulty, audience, questions to avoid."""
    kinds = rules.question_kinds
    lines = [f"Question kinds: {', '.join(kinds)}. Set each question's kind field to its kind."]
    if len(kinds) > 1:
        lines.append("Use every listed kind, for about the same number of questions each.")
    if "single" in kinds:
        lines.append('A "single" question has exactly one correct option; correct_answer_indices is null.')
    if "multiple" in kinds:
        lines.append(
            'A "multiple" question has at least 2 correct options and at least 1 wrong one; '
            "correct_answer_indices lists every correct option (0-based) and includes correct_answer_index."
        )
    if "true_false" in kinds:
        true, false = true_false_pair(language)
        lines.append(
            'A "true_false" question asks whether one claim of the document is true; its options are '
            "exactly "
            f'["{true}", "{false}"] in that order, correct_answer_index 0 if the claim is true, 1 if false; '
            "correct_answer_indices is null."
        )
    lines.append(
        f"Write the title, questions, options and explanations in {language_name(language)} "
        f"(language code {language}); source_quote stays a verbatim copy of the document."
    )
    if rules.difficulty is not None:
        lines.append(f"Difficulty: {DIFFICULTY[rules.difficulty]}")
    if rules.audience is not None:
        lines.append(f"Audience: {rules.audience}. Pitch the wording and the distractors to them.")
    if avoid:
        listed = "\n".join(f"- {text}" for text in avoid)
        lines.append(
            "Other quizzes of the same course already ask these questions; do not repeat or reword any "
            f"of them:\n{listed}"
        )
    return lines


def _fold(pair: tuple[str, str]) -> tuple[str, str]:
    return (pair[0].casefold(), pair[1].casefold())


def _rule(pointer: str, code: str, message: str) -> Failure:
    return Failure(kind="rule", pointer=pointer, code=code, message=message)
