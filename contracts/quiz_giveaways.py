"""Quiz rules that catch give-aways: what a teacher rejects although every structural rule passes.

==========================  ===================================  =========================================
code                        pointer                              fails when
==========================  ===================================  =========================================
answer_in_stem              /questions/i/question                a correct option's words appear in the stem
                                                                 (whole words; ``forbid_answer_in_stem``)
long_blank_answer           /questions/i/question                a fill-in-the-blank stem ("_____") whose
                                                                 correct option has more than
                                                                 ``max_blank_answer_words`` words
distractor_overlaps_answer  /questions/i/options/j               distractor j contains the correct option, is
                                                                 contained in it, or nearly repeats it
                                                                 (``distractor_similarity`` of the
                                                                 characters of the words they do not share)
section_number_in_text      /questions/i/question,               a heading's number glued to the start of
                            /questions/i/source_quote            the quote or of the stem's quoted statement
                                                                 ("1 Measuring price ...")
repeated_stem_opening       /questions/i/question (the later     more than ``max_same_stem_opening_share`` of
                            ones, beyond the share)              the stems (true/false aside) open with
                                                                 the same ``stem_opening_words`` words
==========================  ===================================  =========================================

Each rule is deterministic (folded text, whole words, ``difflib`` ratios) and is repaired where it
points: the stem reworded, the option list rewritten (its correct option kept), the quote cut to the
document's sentence. A long blank answer is fixed by blanking one term, or by asking for the phrase
without a blank (the rule is about cloze stems). True/false questions state a claim, so only the
numbering rule applies to them. Pure functions; the thresholds are ``QuizRules``.
"""

from __future__ import annotations

import difflib
import functools
import math
import re

from suture.config.settings import QuizRules
from suture.contracts.failure import Failure
from suture.contracts.quiz_model import Question, Quiz

BLANK = re.compile(r"_{3,}")
# A heading's number before a capitalised word, at the start of a quote or a quoted statement.
_NUMBERING = r"\d{1,2}(?:\.\d{1,2}){0,3}\.?\s+\(?[A-ZÀ-ÖØ-Þ]"
_QUOTE_OPENS = "\"'\u201c\u2018\u00ab\u201e"
_NUMBERED_START = re.compile(rf"^\s*{_NUMBERING}")
_NUMBERED_QUOTED = re.compile(rf"[{_QUOTE_OPENS}]\s*{_NUMBERING}")
_WORD = re.compile(r"[^\W_]+(?:['\u2019][^\W_]+)*")
MIN_ANSWER_CHARS = 3  # "No", "A": too short to be a give-away by itself


def giveaway_failures(quiz: Quiz, rules: QuizRules) -> list[Failure]:
    """Every give-away failure of ``quiz``, question by question, then the stem openings."""
    failures: list[Failure] = []
    for i, question in enumerate(quiz.questions):
        failures += question_giveaways(i, question, rules)
    failures += repeated_openings(quiz, rules)
    return failures


def question_giveaways(i: int, q: Question, rules: QuizRules) -> list[Failure]:
    """The give-aways of one question (``/questions/i``)."""
    at = f"/questions/{i}"
    failures: list[Failure] = []
    correct = _correct_options(q)
    if q.kind != "true_false":
        failures += _answer_in_stem(at, q, correct, rules)
        failures += _long_blank(at, q, correct, rules)
        failures += _overlapping_distractors(at, q, correct, rules)
    failures += _numbering(at, q, rules)
    return failures


def _correct_options(q: Question) -> list[tuple[int, str]]:
    indices = q.correct_answer_indices if q.kind == "multiple" and q.correct_answer_indices else None
    chosen = indices if indices is not None else [q.correct_answer_index]
    return [(j, q.options[j]) for j in chosen if isinstance(j, int) and 0 <= j < len(q.options)]


def _answer_in_stem(at: str, q: Question, correct: list[tuple[int, str]], rules: QuizRules) -> list[Failure]:
    if not rules.forbid_answer_in_stem:
        return []
    for _, option in correct:
        if contains_words(q.question, option):
            message = (
                f"The question text contains its own answer ({_clip(option)}); reword it so the answer "
                "is not in the question (blank every occurrence, or ask without naming it)."
            )
            return [_rule(f"{at}/question", "answer_in_stem", message)]
    return []


def _long_blank(at: str, q: Question, correct: list[tuple[int, str]], rules: QuizRules) -> list[Failure]:
    limit = rules.max_blank_answer_words
    if limit == 0 or not BLANK.search(q.question):
        return []
    longest = max((len(_WORD.findall(option)) for _, option in correct), default=0)
    if longest <= limit:
        return []
    message = (
        f"The blank's answer is a fragment of {longest} words (at most {limit} for a fill-in-the-blank "
        "question); blank a single term, or ask for the phrase as a question without a blank."
    )
    return [_rule(f"{at}/question", "long_blank_answer", message)]


def _overlapping_distractors(
    at: str, q: Question, correct: list[tuple[int, str]], rules: QuizRules
) -> list[Failure]:
    if rules.distractor_similarity >= 1.0:
        return []
    right = {j for j, _ in correct}
    failures = []
    for j, option in enumerate(q.options):
        if j in right or not option.strip():
            continue
        for _, answer in correct:
            how = overlap(option, answer, rules.distractor_similarity)
            if how is not None:
                message = (
                    f"This distractor {how} the correct option ({_clip(answer)}), which gives the answer "
                    "away; write a distractor that is plausible but distinct."
                )
                failures.append(_rule(f"{at}/options/{j}", "distractor_overlaps_answer", message))
                break
    return failures


def overlap(distractor: str, answer: str, similarity: float) -> str | None:
    """How ``distractor`` gives ``answer`` away ("contains", "is part of", "nearly repeats"), or None.

    Equal options are ``duplicate_options``' to report, not this rule's.
    """
    a, b = _fold(distractor), _fold(answer)
    if not a or not b or a == b:
        return None
    if len(b) >= MIN_ANSWER_CHARS and contains_words(a, b):
        return "contains"
    if len(a) >= MIN_ANSWER_CHARS and contains_words(b, a):
        return "is part of"
    # Near repeats are judged on the words the two do not share: "marginal costs" nearly repeats
    # "marginal cost", while "Warehouse Kappa" and "Warehouse Gamma" are different answers.
    shared = set(a.split()) & set(b.split())
    rest_a = " ".join(w for w in a.split() if w not in shared)
    rest_b = " ".join(w for w in b.split() if w not in shared)
    if not rest_a and not rest_b:
        return "nearly repeats"  # the same words in another order
    if rest_a and rest_b and _similar(rest_a, rest_b, similarity):
        return "nearly repeats"
    return None


def _similar(a: str, b: str, similarity: float) -> bool:
    """True if difflib's ratio of ``a`` and ``b`` reaches ``similarity``.

    Its two cheap upper bounds (from the lengths, then from the characters shared) rule most pairs
    out before the ratio itself is computed, as ``difflib.get_close_matches`` does: a simulated
    model checks every term of a document against each answer.
    """
    if 2.0 * min(len(a), len(b)) / (len(a) + len(b)) < similarity:  # real_quick_ratio()
        return False
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    return matcher.quick_ratio() >= similarity and matcher.ratio() >= similarity


def _numbering(at: str, q: Question, rules: QuizRules) -> list[Failure]:
    if not rules.forbid_section_numbers:
        return []
    failures = []
    if _NUMBERED_QUOTED.search(q.question) or _NUMBERED_START.match(q.question):
        message = (
            "The question carries a section heading's number glued to its text "
            f"({_clip(q.question)}); leave heading numbers out of the question."
        )
        failures.append(_rule(f"{at}/question", "section_number_in_text", message))
    if _NUMBERED_START.match(q.source_quote):
        message = (
            "The source_quote starts with a section heading's number; quote the document's sentence "
            "without the heading before it."
        )
        failures.append(_rule(f"{at}/source_quote", "section_number_in_text", message))
    return failures


def repeated_openings(quiz: Quiz, rules: QuizRules) -> list[Failure]:
    """The later stems opening like too many before them (per opening, the ones past the share).

    True/false questions are left out: "True or false: ..." is their format, not a habit.
    """
    asked = [(i, q) for i, q in enumerate(quiz.questions) if q.kind != "true_false"]
    total = len(asked)
    if rules.max_same_stem_opening_share >= 1.0 or total < rules.min_questions_for_opening_rule:
        return []
    allowed = max(1, math.floor(rules.max_same_stem_opening_share * total + 1e-9))
    holders: dict[tuple[str, ...], list[int]] = {}
    for i, q in asked:
        key = opening(q.question, rules.stem_opening_words)
        if key:
            holders.setdefault(key, []).append(i)
    failures = []
    for key, indices in holders.items():
        for i in indices[allowed:]:
            message = (
                f'{len(indices)} of {total} questions open with "{" ".join(key)}" (at most {allowed}); '
                "word this question differently (vary how the questions are asked)."
            )
            failures.append((i, _rule(f"/questions/{i}/question", "repeated_stem_opening", message)))
    return [failure for _, failure in sorted(failures, key=lambda item: item[0])]


def opening(stem: str, words: int) -> tuple[str, ...]:
    """The first ``words`` words of a stem, case folded (empty when the stem is shorter)."""
    found = [w.casefold() for w in _WORD.findall(stem)][:words]
    return tuple(found) if len(found) == words else ()


def contains_words(text: str, phrase: str) -> bool:
    """True if ``phrase`` occurs in ``text`` as whole words (case and spacing folded)."""
    folded, within = _fold(phrase), _fold(text)
    if len(folded) < MIN_ANSWER_CHARS or folded not in within:  # no occurrence at all: no whole-word one
        return False
    return re.search(rf"(?<![^\W_]){re.escape(folded)}(?![^\W_])", within) is not None


@functools.lru_cache(maxsize=4096)  # the same options and terms are folded again and again
def _fold(text: str) -> str:
    return " ".join(text.split()).casefold().strip(" .,;:!?")


def _clip(text: str, limit: int = 60) -> str:
    return repr(text if len(text) <= limit else text[: limit - 3] + "...")


def _rule(pointer: str, code: str, message: str) -> Failure:
    return Failure(kind="rule", pointer=pointer, code=code, message=message)


def giveaway_instructions(rules: QuizRules) -> list[str]:
    """What the task asks so that no question gives its answer away (the enabled rules only)."""
    lines = []
    if rules.forbid_answer_in_stem:
        lines.append("A question never contains its own answer's words.")
    if rules.max_blank_answer_words:
        lines.append(
            f"A fill-in-the-blank question (with _____) blanks one term of at most "
            f"{rules.max_blank_answer_words} words, never a fragment of a sentence."
        )
    if rules.distractor_similarity < 1.0:
        lines.append("No distractor contains, is part of, or nearly repeats the correct option.")
    if rules.forbid_section_numbers:
        lines.append("Leave section heading numbers out of questions and quotes.")
    if rules.max_same_stem_opening_share < 1.0:
        lines.append("Vary how questions open; do not start them all with the same words.")
    return lines
