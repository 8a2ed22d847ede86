"""Diffs between outputs as RFC 6902 patches, and applying them back."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from contracts.diff import apply_patch, diff
from contracts.errors import PointerError
from contracts.pointer import splice
from tests.contracts.quizzes import make_quiz

QUIZ = make_quiz(5)


@pytest.mark.parametrize(
    ("pointer", "value"),
    [("/questions/2/options/1", "Changed"), ("/title", "Ünïcode ✓"), ("/questions/0/meta~1x", {"a": 1})],
)
def test_given_a_spliced_output_when_diffed_then_patch_targets_that_path_and_replays(
    pointer: str, value: Any
) -> None:
    after = splice(QUIZ, pointer, value)
    ops = diff(QUIZ, after)
    assert [op["path"] for op in ops] == [pointer]
    assert apply_patch(QUIZ, ops) == after


def test_given_equal_outputs_when_diffed_then_empty_patch() -> None:
    assert diff(QUIZ, copy.deepcopy(QUIZ)) == []


def test_given_a_patch_when_applied_then_input_not_mutated() -> None:
    before = copy.deepcopy(QUIZ)
    apply_patch(QUIZ, [{"op": "replace", "path": "/title", "value": "x"}])
    assert before == QUIZ


@pytest.mark.parametrize(
    "ops",
    [
        [{"op": "replace", "path": "/nope/deeper", "value": 1}],
        [{"op": "test", "path": "/title", "value": "not the title"}],
        [{"op": "frobnicate", "path": "/title"}],
    ],
)
def test_given_a_patch_that_does_not_apply_then_pointer_error(ops: list[dict[str, Any]]) -> None:
    with pytest.raises(PointerError):
        apply_patch(QUIZ, ops)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=4),
    lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text(max_size=3), c, max_size=3),
    max_leaves=15,
)


@given(
    st.dictionaries(st.text(max_size=3), json_values, max_size=4),
    st.dictionaries(st.text(max_size=3), json_values, max_size=4),
)
def test_property_applying_the_diff_of_a_and_b_to_a_gives_b(a: dict[str, Any], b: dict[str, Any]) -> None:
    assert apply_patch(a, diff(a, b)) == b
