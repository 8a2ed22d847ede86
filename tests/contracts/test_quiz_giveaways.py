"""The give-away rules on hand-made bad quizzes: code, pointer, setting, and `suture validate`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from suture.config.settings import QuizRules
from suture.contracts.quiz import QuizContract
from suture.contracts.quiz_giveaways import contains_words, overlap
from suture.workers.cli import main
from tests.contracts.quizzes import changed, make_quiz, source_document, text

QUIZ = make_quiz(6)
SOURCE = source_document(6) + "\n1 Measuring price The price of sample 1 is measured in the survey."


def _failures(quiz: dict[str, Any], **rules: Any) -> list[tuple[str, str]]:
    contract = QuizContract(questions=len(quiz["questions"]), source=SOURCE, rules=rules)
    verdict = contract.validate(text(quiz))
    return [(f.code, f.pointer) for f in verdict.failures]


def test_the_shared_valid_quiz_has_no_giveaway() -> None:
    assert _failures(QUIZ) == []


def _answer(i: int) -> str:
    return str(QUIZ["questions"][i]["correct_answer_text"])


@pytest.mark.parametrize(
    ("quiz", "expected"),
    [
        # The stem names its own answer ("The _____' dilemma In the prisoners' dilemma").
        (
            changed(QUIZ, 1, question=f"Which name, {_answer(1).upper()}, is sample 1 catalogued under?"),
            [("answer_in_stem", "/questions/1/question")],
        ),
        # A fill-in-the-blank answer that is a fragment of a sentence.
        (
            changed(
                QUIZ,
                2,
                question="Which words complete: sample 2 _____?",
                options=[
                    "of the collection is catalogued",
                    "Amber of the whole survey",
                    "Basalt in the rock strata",
                    "Jade from eastern hills",
                ],
                correct_answer_index=0,
                correct_answer_text="of the collection is catalogued",
            ),
            [("long_blank_answer", "/questions/2/question")],
        ),
        # Distractors containing, contained in, and nearly repeating the correct option.
        (
            changed(
                QUIZ,
                3,
                options=["Feldspar crystal", "Feldspar 3 variant", "Feldspa 3", "Feldspar 3"],
                correct_answer_index=3,
                correct_answer_text="Feldspar 3",
            ),
            [
                ("distractor_overlaps_answer", "/questions/3/options/1"),
                ("distractor_overlaps_answer", "/questions/3/options/2"),
            ],
        ),
        (
            changed(
                QUIZ,
                3,
                options=["Garnet", "Amber 3", "Basalt 3", "Garnet 3"],
                correct_answer_index=3,
                correct_answer_text="Garnet 3",
            ),
            [("distractor_overlaps_answer", "/questions/3/options/0")],
        ),
        # A heading's number glued into the quote and into the stem's quoted statement.
        (
            changed(
                QUIZ,
                4,
                question='Which name completes "1 Measuring price The price of sample _____"?',
                source_quote="1 Measuring price The price of sample 1 is measured",
            ),
            [
                ("section_number_in_text", "/questions/4/question"),
                ("section_number_in_text", "/questions/4/source_quote"),
            ],
        ),
    ],
)
def test_each_giveaway_is_found_with_its_code_and_pointer(
    quiz: dict[str, Any], expected: list[tuple[str, str]]
) -> None:
    assert _failures(quiz) == expected


def test_stems_opening_alike_past_the_share_flag_the_later_ones() -> None:
    # Given six stems of which four open "Which term completes"
    quiz = QUIZ
    for i in (0, 2, 3, 5):
        quiz = changed(quiz, i, question=f"Which term completes the entry of sample {i} in the collection?")
    # Then the ones past half the quiz (3 of 6) are to reword: only the last one
    assert _failures(quiz) == [("repeated_stem_opening", "/questions/5/question")]
    # And a share of 1.0 turns the rule off, a share of 0.34 flags two
    assert _failures(quiz, max_same_stem_opening_share=1.0) == []
    assert [p for _, p in _failures(quiz, max_same_stem_opening_share=0.34)] == [
        "/questions/3/question",
        "/questions/5/question",
    ]


def test_each_rule_has_a_setting_that_turns_it_off() -> None:
    bad = changed(
        QUIZ,
        1,
        question=f"Which name, {_answer(1)}, fills sample _____?",
        options=["a b c d e", "Amber", "Basalt", "a b c d"],
        correct_answer_index=0,
        correct_answer_text="a b c d e",
        source_quote="1 Measuring price The price",
    )
    assert {code for code, _ in _failures(bad)} == {
        "long_blank_answer",
        "distractor_overlaps_answer",
        "section_number_in_text",
    }
    off = {"max_blank_answer_words": 0, "distractor_similarity": 1.0, "forbid_section_numbers": False}
    assert _failures(bad, **off) == []
    assert _failures(changed(QUIZ, 1, question=f"Is {_answer(1)} it?"), forbid_answer_in_stem=False) == []
    assert QuizRules().max_blank_answer_words == 3


def test_word_matching_is_whole_words_and_case_blind() -> None:
    assert contains_words("In the Prisoners' dilemma, who wins?", "prisoners'")
    assert not contains_words("Which isotope decays?", "iso")
    assert overlap("marginal costs", "marginal cost", 0.85) == "nearly repeats"
    assert overlap("cobalt 101", "basalt 101", 0.85) is None
    assert overlap("Emerald", "emerald", 0.85) is None  # equal options are duplicate_options'


def test_suture_validate_reports_a_giveaway(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    quiz_file = tmp_path / "quiz.json"
    bad = changed(
        make_quiz(15),
        7,
        question=f"Is sample 7 called {make_quiz(15)['questions'][7]['correct_answer_text']}?",
    )
    quiz_file.write_text(text(bad))
    (tmp_path / "source.txt").write_text(source_document(15))
    code = main(["validate", str(quiz_file), "--source", str(tmp_path / "source.txt")])
    verdict = json.loads(capsys.readouterr().out)
    assert code == 1 and [(f["code"], f["pointer"]) for f in verdict["failures"]] == [
        ("answer_in_stem", "/questions/7/question")
    ]
