"""The quiz's teaching knobs: parameters, the rules of each question kind, and what the prompt asks."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from suture.config.settings import Settings
from suture.contracts.errors import ContractParamsError
from suture.contracts.language import detect_language
from suture.contracts.quiz import QuizContract
from suture.contracts.quiz_example import EXAMPLE_SOURCE
from suture.contracts.quiz_params import MAX_AVOIDED, resolve_quiz_params
from suture.contracts.registry import build_contract
from suture.workers.idempotency import request_sha256

FRENCH = (Path(__file__).parents[1] / "data" / "french" / "photosynthese.md").read_text(encoding="utf-8")
QUOTE = "The ampere is the SI base unit of electric current"


def _question(kind: str, options: list[str], index: int, indices: list[int] | None = None) -> dict[str, Any]:
    return {
        "kind": kind,
        "question": f"Which of these holds ({kind})?",
        "options": options,
        "correct_answer_index": index,
        "correct_answer_text": options[index],
        "correct_answer_indices": indices,
        "explanation": "The passage says so.",
        "source_quote": QUOTE,
    }


def _codes(question: dict[str, Any], **rules: Any) -> list[tuple[str, str]]:
    contract = QuizContract(questions=1, source=EXAMPLE_SOURCE, rules=rules)
    verdict = contract.validate({"title": "Units", "questions": [question]})
    return [(f.code, f.pointer) for f in verdict.failures]


def test_knobs_given_as_parameters_land_in_the_stored_rules_over_the_settings() -> None:
    settings = Settings(quiz={"difficulty": "easy", "audience": "nurses"})
    params = resolve_quiz_params(
        {
            "questions": 3,
            "question_kinds": ["multiple", "true_false"],
            "language": "FR",
            "difficulty": "hard",
        },
        settings,
    )
    rules = params["rules"]
    assert rules["question_kinds"] == ["multiple", "true_false"] and rules["language"] == "fr"
    assert rules["difficulty"] == "hard" and rules["audience"] == "nurses"  # the settings' where not given
    assert resolve_quiz_params({}, None)["rules"]["question_kinds"] == ["single"]


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"language": "klingon"}, "language must be auto or one of en, fr"),
        ({"question_kinds": ["essay"]}, "question_kinds.0"),
        ({"difficulty": "brutal"}, "difficulty"),
        ({"question_kinds": ["multiple"], "rules": {"options_per_question": 2}}, "options_per_question >= 3"),
        ({"avoid_questions": "What?"}, "must be a list of question texts"),
    ],
)
def test_bad_knobs_are_refused_naming_the_value(params: dict[str, Any], message: str) -> None:
    with pytest.raises(ContractParamsError) as caught:
        resolve_quiz_params(params, None)
    assert message in str(caught.value) and "\n" not in str(caught.value)


def test_questions_to_avoid_are_bounded_and_do_not_change_what_the_job_is() -> None:
    params = resolve_quiz_params({"avoid_questions": [f"Question {i}?" for i in range(100)] + ["  "]}, None)
    assert len(params["avoid_questions"]) == MAX_AVOIDED and params["avoid_questions"][-1] == "Question 99?"
    spec = {"contract": "quiz", "params": params, "source": "text", "policy": None, "callback": None}
    without = spec | {"params": {k: v for k, v in params.items() if k != "avoid_questions"}}
    assert request_sha256(spec) == request_sha256(without)


def test_the_language_is_detected_from_stop_words() -> None:
    assert detect_language(FRENCH) == "fr"
    assert detect_language(EXAMPLE_SOURCE * 3) == "en"
    assert (
        detect_language(
            "Die Zelle ist die kleinste Einheit des Lebens, und sie teilt sich mit der Mitose. " * 2
        )
        == "de"
    )
    assert detect_language("Photosynthèse, chlorophylle.") is None  # too few words to tell


def test_language_auto_is_stored_as_the_source_language_at_enqueue() -> None:
    params = resolve_quiz_params({"questions": 2}, None)
    assert params["rules"]["language"] == "auto"
    assert QuizContract.params_for_source(params, FRENCH)["rules"]["language"] == "fr"
    assert QuizContract.params_for_source(params, "ok")["rules"]["language"] == "en"  # unclear: English
    chosen = resolve_quiz_params({"language": "de"}, None)
    assert QuizContract.params_for_source(chosen, FRENCH) == chosen  # a chosen language stays


def test_the_prompt_carries_kinds_language_difficulty_audience_and_questions_to_avoid() -> None:
    contract = build_contract(
        "quiz",
        {
            "questions": 4,
            "question_kinds": ["single", "true_false"],
            "difficulty": "hard",
            "audience": "first-year\nnursing students",
            "avoid_questions": ["Où se déroule le cycle de Calvin ?"],
        },
        source=FRENCH,
    )
    text = contract.task_instructions()
    assert text.startswith(
        "Write exactly 4 questions, each with exactly 4 options (true/false questions: exactly 2)."
    )
    assert "Question kinds: single, true_false." in text
    assert '["Vrai", "Faux"]' in text and "in French (language code fr)" in text
    assert "Difficulty: hard:" in text and "Audience: first-year nursing students." in text
    assert "do not repeat or reword any of them:\n- Où se déroule le cycle de Calvin ?" in text
    plain = build_contract("quiz", {"questions": 2, "language": "en"}, source=FRENCH).task_instructions()
    assert "Difficulty" not in plain and "Audience" not in plain and "in English (language code en)" in plain


def test_a_single_answer_question_has_one_answer_and_no_answer_list() -> None:
    options = ["The ampere", "The volt", "The ohm", "The watt"]
    assert _codes(_question("single", options, 0)) == []
    assert _codes(_question("single", options, 0, [0, 1])) == [
        ("answer_set", "/questions/0/correct_answer_indices")
    ]
    assert _codes(_question("true_false", ["True", "False"], 0)) == [("question_kind", "/questions/0/kind")]


def test_a_multiple_answer_question_has_two_or_more_right_and_one_wrong() -> None:
    options = ["The ampere", "The kelvin", "The volt", "The ohm"]
    rules = {"question_kinds": ["multiple"]}
    assert _codes(_question("multiple", options, 0, [0, 1]), **rules) == []
    pointer = "/questions/0/correct_answer_indices"
    for indices in ([0], [0, 1, 2, 3], [0, 0], [0, 7], None, [1, 2]):
        assert _codes(_question("multiple", options, 0, indices), **rules) == [("answer_set", pointer)], (
            indices
        )
    # ...and the options rule still wants options_per_question of them
    assert ("option_count", "/questions/0/options") in _codes(
        _question("multiple", options[:3], 0, [0, 1]), **rules
    )


def test_a_true_false_question_has_exactly_true_then_false_in_the_quiz_language() -> None:
    rules = {"question_kinds": ["true_false"]}
    assert _codes(_question("true_false", ["True", "False"], 1), **rules) == []
    assert _codes(_question("true_false", ["Vrai", "Faux"], 0), **rules, language="fr") == []
    assert _codes(_question("true_false", ["False", "True"], 0), **rules) == [
        ("true_false_options", "/questions/0/options")
    ]
    assert _codes(_question("true_false", ["True", "False", "Maybe"], 0), **rules) == [
        ("option_count", "/questions/0/options"),
        ("true_false_options", "/questions/0/options"),
    ]


def test_the_schema_stays_strict_and_allows_several_correct_answers() -> None:
    question = QuizContract(questions=1).response_schema()["properties"]["questions"]["items"]
    assert question["additionalProperties"] is False and set(question["required"]) == set(
        question["properties"]
    )
    assert question["properties"]["kind"]["enum"] == ["single", "multiple", "true_false"]
    assert question["properties"]["correct_answer_indices"]["anyOf"] == [
        {"items": {"type": "integer"}, "type": "array"},
        {"type": "null"},
    ]
