"""The quiz's deterministic fixers (``QuizContract.fixers``): failures a reordering repairs, no model needed.

``answer_position_skew``: too many correct answers sit at one option position. Each question the
rule names (the last holders of an over-used position) gets its correct option swapped with the
option at the least-used position (ties: the lower position), and its ``correct_answer_index``
moved with it. Every option keeps its text, the correct answer keeps its text: only positions
change. A question whose index is out of range, or whose answer text is not the option at its
index, is left alone (the text is the answer; fixing that mismatch is not a reordering).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from typing import Any

from suture.config.settings import QuizRules
from suture.contracts.failure import Failure
from suture.contracts.pointer import parse_pointer


def fix_answer_position_skew(output: Any, failures: Sequence[Failure], rules: QuizRules) -> Any | None:
    """``output`` with the named questions' correct options moved to under-used positions (None: no
    change)."""
    questions = output.get("questions") if isinstance(output, dict) else None
    if not isinstance(questions, list):
        return None
    counts = Counter(_index(q) for q in questions if _index(q) is not None)
    allowed = math.floor(rules.max_answer_position_share * len(questions) + 1e-9)
    moved = list(questions)
    for number in _named(failures, len(questions)):
        question, index = moved[number], _index(moved[number])
        if index is None or counts[index] <= allowed:
            continue
        options = question["options"]
        target = min((p for p in range(len(options)) if p != index), key=lambda p: (counts[p], p))
        reordered = list(options)
        reordered[index], reordered[target] = reordered[target], reordered[index]
        moved[number] = {**question, "options": reordered, "correct_answer_index": target}
        counts[index] -= 1
        counts[target] += 1
    if moved == questions:
        return None
    return {**output, "questions": moved}


def _named(failures: Sequence[Failure], total: int) -> list[int]:
    """The question numbers the failures point at (``/questions/i``), in order, each once."""
    found: list[int] = []
    for failure in failures:
        tokens = parse_pointer(failure.pointer) if failure.pointer.startswith("/") else []
        if len(tokens) == 2 and tokens[0] == "questions" and tokens[1].isdigit():
            number = int(tokens[1])
            if number < total and number not in found:
                found.append(number)
    return found


def _index(question: Any) -> int | None:
    """The question's correct position if it is consistent (index in range, text = that option), else None."""
    if not isinstance(question, dict):
        return None
    options, index = question.get("options"), question.get("correct_answer_index")
    if not isinstance(options, list) or len(options) < 2:
        return None
    if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < len(options):
        return None
    text = question.get("correct_answer_text")
    if not isinstance(text, str) or not isinstance(options[index], str):
        return None
    return index if options[index].strip() == text.strip() else None
