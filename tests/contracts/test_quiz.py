"""Every quiz rule with real outputs: the code, the precise pointer, and the thresholds from config."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from suture.config.settings import QuizRules
from suture.contracts.errors import ContractDefinitionError
from suture.contracts.quiz import QuizContract
from suture.contracts.quiz_example import EXAMPLE_SOURCE
from tests.contracts.quizzes import changed, fact, make_quiz, source_document, text

QUIZ = make_quiz(15)
SOURCE = source_document(15)


def _failures(quiz: dict[str, Any], **contract_kwargs: Any) -> list[tuple[str, str]]:
    contract_kwargs.setdefault("questions", len(quiz["questions"]))
    contract_kwargs.setdefault("source", SOURCE)
    verdict = QuizContract(**contract_kwargs).validate(text(quiz))
    assert verdict.ok == (not verdict.failures)
    assert all(f.kind == "rule" and f.message.endswith(".") for f in verdict.failures)
    return [(f.code, f.pointer) for f in verdict.failures]


def test_given_a_valid_quiz_when_validated_then_no_failures() -> None:
    assert _failures(QUIZ) == []


def _swap_correct_into(quiz: dict[str, Any], i: int, position: int) -> dict[str, Any]:
    question = quiz["questions"][i]
    options = list(question["options"])
    old = question["correct_answer_index"]
    options[old], options[position] = options[position], options[old]
    return changed(
        quiz, i, options=options, correct_answer_index=position, correct_answer_text=options[position]
    )


@pytest.mark.parametrize(
    ("quiz", "expected"),
    [
        (changed(QUIZ, 3, question="   "), [("empty_question", "/questions/3/question")]),
        (
            changed(QUIZ, 3, question="Name the catalogue entry."),
            [("not_a_question", "/questions/3/question")],
        ),
        (
            changed(QUIZ, 5, options=QUIZ["questions"][5]["options"][:3]),
            [("option_count", "/questions/5/options")],
        ),
        (
            changed(
                QUIZ,
                5,
                options=[
                    *QUIZ["questions"][5]["options"][:3],
                    "  " + QUIZ["questions"][5]["options"][0].upper().replace(" ", "   "),
                ],
            ),
            [("duplicate_options", "/questions/5/options")],
        ),
        (
            changed(QUIZ, 5, options=[*QUIZ["questions"][5]["options"][:3], "None of the above"]),
            [("all_none_of_the_above", "/questions/5/options")],
        ),
        (
            changed(QUIZ, 5, options=[*QUIZ["questions"][5]["options"][:3], "all of  the  answers"]),
            [("all_none_of_the_above", "/questions/5/options")],
        ),
        (
            changed(QUIZ, 3, correct_answer_index=4),
            [("answer_index_out_of_range", "/questions/3/correct_answer_index")],
        ),
        (
            changed(QUIZ, 3, correct_answer_index=-1),
            [("answer_index_out_of_range", "/questions/3/correct_answer_index")],
        ),
        (
            changed(QUIZ, 3, correct_answer_text="Jade 3"),
            [("answer_text_mismatch", "/questions/3/correct_answer_text")],
        ),
        (
            changed(QUIZ, 3, source_quote="A sentence nobody wrote."),
            [("quote_not_in_source", "/questions/3/source_quote")],
        ),
        (changed(QUIZ, 3, explanation=" "), [("empty_field", "/questions/3/explanation")]),
        (changed(QUIZ, 3, source_quote=""), [("empty_field", "/questions/3/source_quote")]),
        (
            changed(QUIZ, 5, options=[*QUIZ["questions"][5]["options"][:3], ""]),
            [("empty_field", "/questions/5/options/3")],
        ),
        ({**QUIZ, "title": ""}, [("empty_field", "/title")]),
    ],
)
def test_given_one_broken_question_when_validated_then_one_rule_failure_at_its_path(
    quiz: dict[str, Any], expected: list[tuple[str, str]]
) -> None:
    assert _failures(quiz) == expected


def test_given_outer_whitespace_differences_when_checked_then_answer_text_still_matches() -> None:
    question = QUIZ["questions"][3]
    assert _failures(changed(QUIZ, 3, correct_answer_text=f" {question['correct_answer_text']} ")) == []


@pytest.mark.parametrize("count", [14, 16])
def test_given_the_wrong_number_of_questions_when_validated_then_question_count_at_questions(
    count: int,
) -> None:
    quiz = make_quiz(count)
    assert _failures(quiz, questions=15, source=source_document(count)) == [("question_count", "/questions")]


def _imbalanced(correct: str, distractor: str) -> dict[str, Any]:
    question = QUIZ["questions"][5]
    index = question["correct_answer_index"]
    options = [correct if j == index else f"{distractor} {j}" for j in range(4)]
    return changed(QUIZ, 5, options=options, correct_answer_text=correct)


@pytest.mark.parametrize(
    ("quiz", "rules", "imbalanced"),
    [
        (_imbalanced("Basalt, the volcanic rock described in the survey", "Jade"), {}, True),
        # Longer by the ratio, but by fewer than 12 characters: short options like Yes/No stay legal.
        (_imbalanced("Dolomite xx", "Jade"), {}, False),
        # Longer by 12+ characters but within the 1.5 ratio of the longest distractor.
        (_imbalanced("A moderately long answer text here", "A distractor of some decent length"), {}, False),
        # The thresholds come from config: a smaller required excess flags it.
        (
            _imbalanced("Dolomite xx", "Jade"),
            {"min_correct_length_excess_chars": 2},
            True,
        ),
    ],
)
def test_given_option_lengths_when_validated_then_imbalanced_options_follows_the_thresholds(
    quiz: dict[str, Any], rules: dict[str, Any], imbalanced: bool
) -> None:
    expected = [("imbalanced_options", "/questions/5/options")] if imbalanced else []
    assert _failures(quiz, rules=QuizRules(**rules)) == expected


def _all_at(n: int, position: int) -> dict[str, Any]:
    quiz = make_quiz(n)
    for i in range(n):
        quiz = _swap_correct_into(quiz, i, position)
    return quiz


@pytest.mark.parametrize(
    ("quiz", "share", "moved"),
    [
        # 15 questions all at position 0, limit 50% -> 7 may stay; the last 8 move.
        (_all_at(15, 0), 0.5, list(range(7, 15))),
        # 10 of 15 at position 2 (questions 0..9): the last 3 of them move.
        (
            _swap_correct_into(
                _swap_correct_into(
                    _swap_correct_into(
                        _swap_correct_into(_swap_correct_into(_swap_correct_into(QUIZ, 0, 2), 1, 2), 3, 2),
                        4,
                        2,
                    ),
                    5,
                    2,
                ),
                7,
                2,
            ),
            0.5,
            [7, 10, 14],
        ),
        (_all_at(15, 1), 1.0, []),
        (_all_at(3, 0), 0.5, []),  # below min_questions_for_position_rule
    ],
)
def test_given_skewed_answer_positions_when_validated_then_just_enough_later_questions_are_moved(
    quiz: dict[str, Any], share: float, moved: list[int]
) -> None:
    n = len(quiz["questions"])
    failures = _failures(quiz, source=source_document(n), rules=QuizRules(max_answer_position_share=share))
    assert failures == [("answer_position_skew", f"/questions/{i}") for i in moved]


def test_given_position_rule_fixed_as_reported_when_revalidated_then_it_passes() -> None:
    quiz = _all_at(15, 0)
    contract = QuizContract(questions=15, source=SOURCE)
    targets = [int(f.pointer.split("/")[2]) for f in contract.validate(quiz).failures]
    for offset, i in enumerate(targets):
        quiz = _swap_correct_into(quiz, i, 1 + offset % 3)
    assert contract.validate(quiz).ok


def test_given_several_broken_questions_when_validated_then_failures_are_in_document_order() -> None:
    quiz = changed(changed(QUIZ, 9, question=""), 2, correct_answer_index=7)
    assert _failures(quiz) == [
        ("answer_index_out_of_range", "/questions/2/correct_answer_index"),
        ("empty_question", "/questions/9/question"),
    ]


@pytest.mark.parametrize("rules", [{"forbid_all_none_of_the_above": False}, {"require_question_mark": False}])
def test_given_configurable_rules_switched_off_when_validated_then_they_do_not_fire(
    rules: dict[str, Any],
) -> None:
    quiz = changed(
        QUIZ, 5, question="Name it.", options=[*QUIZ["questions"][5]["options"][:3], "None of the above"]
    )
    codes = {code for code, _ in _failures(quiz, rules=QuizRules(**rules))}
    off = "all_none_of_the_above" if "forbid_all_none_of_the_above" in rules else "not_a_question"
    assert off not in codes and len(codes) == 1


@pytest.mark.parametrize(
    "quote",
    [fact(4), fact(4).replace(" ", "\n  "), f"  {fact(4)}\t"],
)
def test_given_a_quote_with_different_whitespace_when_checked_then_it_is_found(quote: str) -> None:
    assert _failures(changed(QUIZ, 4, source_quote=quote)) == []


def test_given_typographic_quotes_when_checked_then_they_match_straight_ones() -> None:
    source = "He said \u201cthe core is made of iron\u201d in his report."
    quiz = changed(make_quiz(1), 0, source_quote='said "the core is made of iron"')
    assert _failures(quiz, source=source) == []
    assert _failures(changed(quiz, 0, source_quote="said 'the core is made of iron'"), source=source) == [
        ("quote_not_in_source", "/questions/0/source_quote")
    ]


def test_given_no_source_when_validated_then_the_quote_rule_is_off() -> None:
    quiz = changed(QUIZ, 3, source_quote="A sentence nobody wrote.")
    assert _failures(quiz, source=None) == []


def test_given_a_huge_quiz_when_validated_then_every_broken_question_is_found() -> None:
    quiz = make_quiz(1000)
    broken = [0, 499, 999]
    for i in broken:
        quiz = changed(quiz, i, correct_answer_text="Wrong")
    assert _failures(quiz, source=source_document(1000)) == [
        ("answer_text_mismatch", f"/questions/{i}/correct_answer_text") for i in broken
    ]


def test_given_unicode_questions_when_validated_then_rules_apply_normally() -> None:
    source = "Le quartz (SiO₂) est un minéral très répandu — 石英."
    quiz = {
        "title": "Minéraux",
        "questions": [
            {
                "question": "Quelle est la formule du quartz ?",
                "options": ["SiO₂", "Fe₂O₃", "CaCO₃", "ＳｉＯ₂"],
                "correct_answer_index": 0,
                "correct_answer_text": "SiO₂",
                "explanation": "Le texte donne SiO₂.",
                "source_quote": "Le quartz (SiO₂) est un minéral",
            }
        ],
    }
    assert _failures(quiz, source=source) == []
    assert _failures(changed(quiz, 0, options=["SiO₂", "Fe₂O₃", "CaCO₃", "sio₂"]), source=source) == [
        ("duplicate_options", "/questions/0/options")
    ]


# --- the contract's prompt-side facts -----------------------------------------------------------


@pytest.mark.parametrize("k", range(2, 11))
def test_given_any_option_count_when_canonical_example_then_it_is_valid_against_its_source(k: int) -> None:
    contract = QuizContract(questions=2, source=EXAMPLE_SOURCE, rules=QuizRules(options_per_question=k))
    example = contract.canonical_example()
    assert contract.validate(example).ok
    assert all(len(q["options"]) == k for q in example["questions"])


@pytest.mark.parametrize(("n", "k"), [(15, 4), (3, 5)])
def test_given_parameters_when_task_instructions_then_the_simulator_phrases_are_there(n: int, k: int) -> None:
    instructions = QuizContract(questions=n, rules=QuizRules(options_per_question=k)).task_instructions()
    assert f"Write exactly {n} questions" in instructions
    assert f"exactly {k} options" in instructions


def test_given_the_schema_template_then_it_has_the_schema_shape_and_k_options() -> None:
    contract = QuizContract(questions=3, rules=QuizRules(options_per_question=5))
    template = contract.schema_template()
    verdict = contract.validate(template)
    assert {f.kind for f in verdict.failures} <= {"rule"}  # schema-valid placeholders
    assert len(template["questions"][0]["options"]) == 5


@pytest.mark.parametrize(
    ("pointer", "parent_pointer"),
    [
        ("/questions/3/options", "/questions/3"),
        ("/questions/3/options/2", "/questions/3"),
        ("/questions/3", "/questions/3"),
        ("/questions/3/missing_field", "/questions/3"),
        ("/title", ""),
    ],
)
def test_given_a_pointer_when_slice_context_then_the_enclosing_question(
    pointer: str, parent_pointer: str
) -> None:
    context = QuizContract().slice_context(QUIZ, pointer)
    assert context["parent_pointer"] == parent_pointer
    assert context["parent"] == (QUIZ["questions"][3] if parent_pointer else QUIZ)


def test_given_a_question_pointer_when_source_excerpt_then_quote_with_surroundings() -> None:
    source = "x" * 1000 + " " + fact(7) + " " + "y" * 1000
    contract = QuizContract(source=source)
    excerpt = contract.source_excerpt(QUIZ, "/questions/7/options")
    assert excerpt is not None and fact(7) in excerpt
    assert 380 <= len(excerpt) - len(fact(7)) <= 420
    assert excerpt.startswith("...") and excerpt.endswith("...")


@pytest.mark.parametrize(
    ("source", "pointer", "quiz"),
    [
        (None, "/questions/1", QUIZ),
        (SOURCE, "/title", QUIZ),
        (SOURCE, "/questions/99", QUIZ),
        (SOURCE, "/questions/1", changed(QUIZ, 1, source_quote="not in the text")),
    ],
)
def test_given_nothing_to_quote_when_source_excerpt_then_none(
    source: str | None, pointer: str, quiz: Any
) -> None:
    assert QuizContract(source=source).source_excerpt(quiz, pointer) is None


def test_given_params_when_rebuilt_then_same_contract_and_json_able() -> None:
    contract = QuizContract(questions=7, rules=QuizRules(options_per_question=5))
    params = json.loads(json.dumps(contract.params()))
    assert QuizContract(**params).params() == contract.params()
    assert "source" not in QuizContract(source="secret document", **params).params()


@pytest.mark.parametrize(
    "kwargs",
    [
        {"questions": 0},
        {"questions": True},
        {"questions": "15"},
        {"source": b"bytes"},
        {"rules": {"options_per_question": 1}},
    ],
)
def test_given_bad_contract_parameters_then_contract_definition_error(kwargs: dict[str, Any]) -> None:
    with pytest.raises(ContractDefinitionError, match="quiz"):
        QuizContract(**kwargs)


def test_given_validation_when_repeated_then_deterministic() -> None:
    quiz = copy.deepcopy(_all_at(15, 0))
    contract = QuizContract(questions=15, source=SOURCE)
    assert contract.validate(text(quiz)) == contract.validate(text(quiz))


def _stem(i: int) -> str:
    return QUIZ["questions"][i]["question"]


@pytest.mark.parametrize(
    ("stem", "exact"),
    [
        (_stem(2), True),  # a copy
        ("  which NAME is sample 2 of the collection catalogued under  ?", True),  # case, spaces, punctuation
        ("Under which name is sample 2 of the collection catalogued?", True),  # the same words moved
        ("Which name is sample 2 of the whole collection catalogued under?", False),  # one word added
    ],
)
def test_given_a_repeated_stem_when_validated_then_the_later_question_is_a_duplicate(
    stem: str, exact: bool
) -> None:
    # Given a quiz whose question 9 repeats question 2 (same or nearly the same words)
    quiz = changed(QUIZ, 9, question=stem)
    # When it is validated, Then question 9, the later one, is the one to regenerate
    verdict = QuizContract(questions=15, source=SOURCE).validate(text(quiz))
    assert [(f.code, f.pointer) for f in verdict.failures] == [("duplicate_question", "/questions/9")]
    message = verdict.failures[0].message
    assert "question 3" in message and message.startswith(
        "This question repeats" if exact else "This question nearly"
    )


def test_given_stems_that_differ_in_their_point_when_validated_then_no_duplicate() -> None:
    # Given parallel questions about different samples, and a pair that differs by one swapped word
    short = changed(
        changed(QUIZ, 0, question="Which gas do plants absorb in daylight?"),
        1,
        question="Which gas do plants release in daylight?",
    )
    # Then neither is a repeat at the packaged threshold
    assert _failures(short) == []


@pytest.mark.parametrize(
    ("rules", "flagged"),
    [
        ({}, False),
        ({"duplicate_stem_similarity": 0.7}, True),
        ({"duplicate_stem_similarity": 0.7, "forbid_duplicate_questions": False}, False),
    ],
)
def test_given_the_similarity_threshold_from_config_then_it_decides(
    rules: dict[str, Any], flagged: bool
) -> None:
    quiz = changed(
        changed(QUIZ, 0, question="Which gas do plants absorb in daylight?"),
        1,
        question="Which gas do plants release in daylight?",
    )
    failures = _failures(quiz, rules=rules)
    assert (("duplicate_question", "/questions/1") in failures) == flagged
    assert flagged or failures == []


def test_given_three_copies_then_each_later_copy_points_at_the_first() -> None:
    quiz = changed(changed(QUIZ, 4, question=_stem(1)), 11, question=_stem(1))
    verdict = QuizContract(questions=15, source=SOURCE).validate(text(quiz))
    assert [f.pointer for f in verdict.failures] == ["/questions/4", "/questions/11"]
    assert all("question 2 " in f.message for f in verdict.failures)
