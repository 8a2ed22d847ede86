"""The simulator honours a quiz's language and question kinds (a simulation, exercised like a model)."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from suture.contracts.registry import build_contract
from suture.tasks.prompts import task_messages
from suture.workers.simulator.profiles import get_profile
from suture.workers.simulator.prompt import read_prompt
from suture.workers.simulator.quizgen import write_quiz

FRENCH = (Path(__file__).parents[2] / "data" / "french" / "photosynthese.md").read_text(encoding="utf-8")
ENGLISH = (Path(__file__).parents[3] / "examples" / "photosynthesis.md").read_text(encoding="utf-8")


def _quiz(source: str, seed: int, **params: object) -> tuple[dict[str, object], list[str]]:
    contract = build_contract("quiz", {"questions": 9, **params}, source=source)
    prompt = read_prompt(task_messages(contract.task_instructions(), source), "quiz")
    profile = get_profile("perfect")
    quiz = write_quiz(prompt, profile.traits("gpt-5-nano"), profile, random.Random(seed))
    return quiz, [f.code for f in contract.validate(quiz).failures]


@pytest.mark.parametrize("seed", range(5))
def test_a_french_document_gets_a_french_quiz_of_every_kind_asked(seed: int) -> None:
    quiz, codes = _quiz(FRENCH, seed, question_kinds=["single", "multiple", "true_false"])
    assert codes == []
    questions = quiz["questions"]
    assert isinstance(questions, list)
    assert [q["kind"] for q in questions] == ["single", "multiple", "true_false"] * 3
    assert str(quiz["title"]).startswith("Quiz : ")
    assert all(
        q["question"].endswith(" ?") and q["explanation"].startswith("Le document dit") for q in questions
    )
    assert all(q["options"] == ["Vrai", "Faux"] for q in questions if q["kind"] == "true_false")
    assert all(len(q["correct_answer_indices"]) == 2 for q in questions if q["kind"] == "multiple")


def test_an_english_document_stays_english_and_a_chosen_language_wins() -> None:
    quiz, codes = _quiz(ENGLISH, 1, question_kinds=["true_false"])
    assert codes == [] and all(q["options"] == ["True", "False"] for q in quiz["questions"])  # type: ignore[union-attr]
    quiz, codes = _quiz(FRENCH, 1, question_kinds=["true_false"], language="de")
    assert codes == [] and all(q["question"].startswith("Wahr oder falsch") for q in quiz["questions"])  # type: ignore[union-attr]
