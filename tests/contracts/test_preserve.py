"""Merging surgical slices under preserve patterns: violators alone are rolled back, with failures."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from suture.contracts.errors import PointerError
from suture.contracts.preserve import merge_with_preserve
from tests.contracts.quizzes import make_quiz

QUIZ = make_quiz(6)
RELATIVE = ["correct_answer_index", "correct_answer_text"]


def _repair(i: int, *, keep_answer: bool, **fields: Any) -> dict[str, Any]:
    """A regenerated question i: new distractors; the answer kept in place or moved."""
    question = copy.deepcopy(QUIZ["questions"][i])
    index = question["correct_answer_index"]
    question["options"] = [
        o if j == index else f"New distractor {i}.{j}" for j, o in enumerate(question["options"])
    ]
    if not keep_answer:
        question["correct_answer_index"] = (index + 1) % 4
        question["correct_answer_text"] = question["options"][(index + 1) % 4]
    question.update(fields)
    return question


@pytest.mark.parametrize(
    "preserve", [RELATIVE, ["/questions/*/correct_answer_index", "/questions/*/correct_answer_text"]]
)
def test_given_one_violating_slice_when_merged_then_only_it_is_rolled_back(preserve: list[str]) -> None:
    before = copy.deepcopy(QUIZ)
    slices = {
        "/questions/1": _repair(1, keep_answer=True),
        "/questions/4": _repair(4, keep_answer=False),
        "/questions/5": _repair(5, keep_answer=True),
    }
    outcome = merge_with_preserve(QUIZ, slices, preserve)
    assert outcome.applied == ["/questions/1", "/questions/5"]
    assert outcome.rolled_back == ["/questions/4"]
    assert [(f.kind, f.code, f.pointer) for f in outcome.failures] == [
        ("preserve", "preserve_violated", "/questions/4/correct_answer_index"),
        ("preserve", "preserve_violated", "/questions/4/correct_answer_text"),
    ]
    assert outcome.output["questions"][1] == slices["/questions/1"]
    assert outcome.output["questions"][5] == slices["/questions/5"]
    assert outcome.output["questions"][4] == QUIZ["questions"][4]
    assert before == QUIZ
    assert "/questions/4" in outcome.failures[0].message


def test_given_slices_below_the_preserved_values_when_merged_then_siblings_are_checked_relative_to_each() -> (
    None
):
    question = QUIZ["questions"][2]
    new_options = [f"Other {j}" for j in range(4)]
    outcome = merge_with_preserve(QUIZ, {"/questions/2/options": new_options}, ["correct_answer_index"])
    # "correct_answer_index" relative to /questions/2/options does not exist: nothing to preserve there.
    assert outcome.applied == ["/questions/2/options"]
    assert outcome.output["questions"][2]["correct_answer_index"] == question["correct_answer_index"]


def test_given_an_absolute_pattern_above_a_slice_when_slice_changes_it_then_rolled_back() -> None:
    outcome = merge_with_preserve(QUIZ, {"/questions/0/explanation": "Changed."}, ["/questions/0"])
    assert outcome.rolled_back == ["/questions/0/explanation"]
    assert outcome.failures[0].pointer == "/questions/0"
    assert outcome.output == QUIZ


def test_given_a_preserved_value_removed_when_merged_then_violation_says_removed() -> None:
    question = copy.deepcopy(QUIZ["questions"][3])
    del question["correct_answer_text"]
    outcome = merge_with_preserve(QUIZ, {"/questions/3": question}, RELATIVE)
    assert outcome.rolled_back == ["/questions/3"]
    assert "removed it" in outcome.failures[0].message


@pytest.mark.parametrize(("old", "new"), [(1, True), (1, 1.0), (0, False)])
def test_given_values_python_considers_equal_when_compared_then_json_types_differ(old: Any, new: Any) -> None:
    doc = {"items": [{"n": old, "t": "x"}]}
    outcome = merge_with_preserve(doc, {"/items/0": {"n": new, "t": "y"}}, ["n"])
    assert outcome.rolled_back == ["/items/0"]


def test_given_a_preserved_value_that_did_not_exist_when_added_then_not_a_violation() -> None:
    doc: dict[str, Any] = {"items": [{"t": "x"}]}
    outcome = merge_with_preserve(doc, {"/items/0": {"t": "y", "n": 1}}, ["n"])
    assert outcome.applied == ["/items/0"] and outcome.failures == []


def test_given_no_preserve_patterns_when_merged_then_everything_applies() -> None:
    slices = {"/questions/0": _repair(0, keep_answer=False), "/title": "New title"}
    outcome = merge_with_preserve(QUIZ, slices)
    assert outcome.applied == ["/questions/0", "/title"] and outcome.rolled_back == []
    assert outcome.output["title"] == "New title"


def test_given_a_slice_equal_to_the_current_value_when_merged_then_output_equals_previous() -> None:
    outcome = merge_with_preserve(QUIZ, {"/questions/2": copy.deepcopy(QUIZ["questions"][2])}, RELATIVE)
    assert outcome.output == QUIZ and outcome.failures == []


def test_given_a_bad_slice_pointer_when_merged_then_pointer_error() -> None:
    with pytest.raises(PointerError):
        merge_with_preserve(QUIZ, {"/questions/60": {}}, RELATIVE)
