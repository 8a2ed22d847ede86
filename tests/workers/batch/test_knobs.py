"""What a batch asks of each section: a count from its length, the knobs, earlier questions to avoid."""

from __future__ import annotations

from typing import Any

import pytest

from suture.config.settings import AutoQuestions, Settings
from suture.workers.batch.knobs import AskedSoFar, QuizAsk, identity, questions_for, too_short
from suture.workers.batch.runner import idempotency_key
from suture.workers.documents import Section


def _quiz(*stems: str) -> dict[str, Any]:
    return {"title": "t", "questions": [{"question": stem} for stem in stems]}


@pytest.mark.parametrize(
    ("chars", "expected"), [(70, None), (899, None), (900, 3), (2212, 7), (6000, 15), (60_000, 15)]
)
def test_auto_questions_follow_the_section_length_within_bounds(chars: int, expected: int | None) -> None:
    auto = AutoQuestions()
    assert questions_for(chars, None, auto) == expected
    assert questions_for(chars, 6, auto) == 6  # a count given is the count


def test_a_section_too_short_says_why_in_words() -> None:
    assert too_short(70, AutoQuestions()) == (
        "too short for a quiz: 70 characters, 900 needed for 3 questions "
        "(batch.auto_questions; or give --questions N)"
    )
    with pytest.raises(ValueError, match="exceeds max_questions"):
        AutoQuestions(min_questions=5, max_questions=4)


def test_repeats_across_sections_are_found_and_listed_for_later_prompts() -> None:
    asked = AskedSoFar(threshold=0.85)
    first = {"file": "a.md", "section": 1, "title": "Cells"}
    assert asked.add(first, _quiz("Which organelle makes ATP in the cell?", "What is mitosis?")) == []
    found = asked.add(
        {"file": "b.md", "section": 2, "title": None},
        _quiz("What does a ribosome build?", "which organelle makes ATP in the cell"),
    )
    assert found == [
        {
            "source": {"file": "b.md", "section": 2, "title": None},
            "question": 2,
            "stem": "which organelle makes ATP in the cell",
            "repeats": first | {"question": 1, "stem": "Which organelle makes ATP in the cell?"},
            "similarity": 1.0,
        }
    ]
    assert asked.avoid()[0] == "Which organelle makes ATP in the cell?" and len(asked.avoid()) == 4


def test_each_section_gets_its_count_the_knobs_and_the_questions_to_avoid() -> None:
    ask = QuizAsk(Settings(), None, {"question_kinds": ["multiple"], "language": "fr"})
    assert ask.count(70) is None and ask.count(3000) == 10
    before = ask.params(10)
    assert before["questions"] == 10 and before["rules"]["question_kinds"] == ["multiple"]
    assert before["rules"]["language"] == "fr" and "avoid_questions" not in before
    ask.finished({"file": "a.md", "section": 1}, _quiz("Quels termes complètent cet énoncé ?"))
    after = ask.params(10)
    assert after["avoid_questions"] == ["Quels termes complètent cet énoncé ?"]
    # ...which guide the prompt but do not make another job: the same idempotency key
    section = Section(source="a.md", index=1, title=None, text="x" * 3000)
    assert identity(after) == before
    assert idempotency_key(section, after, None) == idempotency_key(section, before, None)
