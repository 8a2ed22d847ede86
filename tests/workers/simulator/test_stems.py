"""The simulated model's varied stems, its give-away habits, and its repairs of give-aways."""

from __future__ import annotations

import json
import random
from collections import Counter
from typing import Any

import pytest

from suture.contracts.quiz import QuizContract
from suture.tasks.prompts import canonical_json, failure_lines
from suture.workers.simulator import PROFILES
from suture.workers.simulator.prompt import read_prompt
from suture.workers.simulator.quizgen import write_quiz
from suture.workers.simulator.stems import fixed_stem, repair_text

from .course import PHOTOSYNTHESIS

GIVEAWAYS = {"answer_in_stem", "long_blank_answer", "distractor_overlaps_answer", "repeated_stem_opening"}


def _quizzes(profile: str, model: str, count: int) -> tuple[QuizContract, list[dict[str, Any]]]:
    chosen = PROFILES[profile]
    contract = QuizContract(15, source=PHOTOSYNTHESIS)
    prompt = read_prompt(
        [
            {
                "role": "user",
                "content": f"{contract.task_instructions()}\n\n<document>\n{PHOTOSYNTHESIS}\n</document>",
            }
        ],
        "quiz",
    )
    model_traits = chosen.traits(model)
    return contract, [write_quiz(prompt, model_traits, chosen, random.Random(seed)) for seed in range(count)]


def test_the_perfect_profile_gives_nothing_away_and_varies_its_openings() -> None:
    contract, quizzes = _quizzes("perfect", "gpt-5-nano", 20)
    codes = Counter(code for quiz in quizzes for code in contract.validate(json.dumps(quiz)).codes())
    assert not GIVEAWAYS & set(codes)
    openings = Counter(q["question"].split()[0] for quiz in quizzes for q in quiz["questions"])
    assert len(openings) >= 3


def test_the_realistic_nano_has_each_habit() -> None:
    contract, quizzes = _quizzes("realistic", "gpt-5-nano", 30)
    codes = {code for quiz in quizzes for code in contract.validate(json.dumps(quiz)).codes()}
    assert codes >= GIVEAWAYS


@pytest.mark.parametrize(
    ("stem", "answer", "codes", "check"),
    [
        (
            'Which term completes this statement from the document: "The _____ dilemma, as in the prisoners '
            'dilemma."?',
            "prisoners",
            {"answer_in_stem"},
            lambda s: "prisoners" not in s and "_____" in s,
        ),
        (
            'What word belongs in the gap: "The firm produces _____."?',
            "up to the point where marginal cost",
            {"long_blank_answer"},
            lambda s: "_____" not in s and "The firm produces" in s,
        ),
        (
            'Which term completes this statement from the document: "1 Measuring price The _____ is set."?',
            "price",
            {"section_number_in_text"},
            lambda s: '"Measuring' in s,
        ),
        (
            'Which term completes this statement from the document: "The _____ is set."?',
            "price",
            {"repeated_stem_opening"},
            lambda s: not s.startswith("Which term completes") and '"The _____ is set."' in s,
        ),
        (
            'Which term completes this statement from the document: "A _____ is a document."?',
            "document",
            {"answer_in_stem"},
            lambda s: "document" not in s.replace("_____", ""),
        ),
    ],
)
def test_a_stem_is_repaired_for_each_giveaway(stem: str, answer: str, codes: set[str], check: object) -> None:
    fixed = fixed_stem(stem, answer, frozenset(codes), "en", random.Random(0))
    assert check(fixed), fixed  # type: ignore[operator]


def test_a_quote_slice_loses_its_heading_number() -> None:
    # Given the quote of a question failing section_number_in_text, and the perfect profile's model
    source = "1 Measuring price The price is set by supply and demand in a market."
    question = {
        "kind": "single",
        "question": 'What word belongs in the gap: "The _____ is set by supply and demand."?',
        "options": ["price", "wage", "rent", "tax"],
        "correct_answer_index": 0,
        "correct_answer_text": "price",
        "correct_answer_indices": None,
        "explanation": "The document says so.",
        "source_quote": source,
    }
    contract = QuizContract(1, source=source)
    failures = contract.validate(json.dumps({"title": "t", "questions": [question]})).failures
    assert [(f.code, f.pointer) for f in failures] == [
        ("section_number_in_text", "/questions/0/source_quote")
    ]
    content = (
        f"<document>\n{source}\n</document>\n\n"
        f'<slice pointer="/questions/0/source_quote">{json.dumps(source)}</slice>\n\n'
        f'<context pointer="/questions/0">{canonical_json({**question, "source_quote": "..."})}</context>\n\n'
        f"<failures>\n{failure_lines(failures)}\n</failures>"
    )
    perfect = PROFILES["perfect"]
    reply = repair_text(
        read_prompt([{"role": "user", "content": content}], "quiz_slice"),
        perfect.traits("gpt-5-nano"),
        random.Random(0),
    )
    # When repaired, Then the quote is the document's sentence without the number, and the quiz is valid
    assert (
        reply is not None
        and reply["value"] == "Measuring price The price is set by supply and demand in a market."
    )
    repaired = {**question, "source_quote": reply["value"]}
    assert contract.validate(json.dumps({"title": "t", "questions": [repaired]})).ok
