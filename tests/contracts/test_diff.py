"""Diffs between outputs as RFC 6902 patches, and applying them back."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from suture.contracts.diff import apply_patch, diff
from suture.contracts.errors import PointerError
from suture.contracts.pointer import splice
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
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=4),
    lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text(max_size=3), c, max_size=3),
    max_leaves=15,
)


@given(
    st.dictionaries(st.text(max_size=3), json_values, max_size=4),
    st.dictionaries(st.text(max_size=3), json_values, max_size=4),
)
def test_property_applying_the_diff_of_a_and_b_to_a_gives_b(a: dict[str, Any], b: dict[str, Any]) -> None:
    assert _typed(apply_patch(a, diff(a, b))) == _typed(b)


@given(json_values, json_values)
def test_property_any_two_json_values_diff_and_replay(a: Any, b: Any) -> None:
    # Given any two JSON values (scalars, arrays, objects at the root too)
    # When the diff of a to b is applied to a, Then it gives b, types included (1, 1.0 and true differ)
    patched = apply_patch({"root": a}, [{**op, "path": "/root" + op["path"]} for op in diff(a, b)])
    assert _typed(patched["root"]) == _typed(b)


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [
        ([1, 2, 3], [1], [{"op": "remove", "path": "/2"}, {"op": "remove", "path": "/1"}]),
        ([1], [1, 2], [{"op": "add", "path": "/1", "value": 2}]),
        ({"a": 1}, {"a": 1.0}, [{"op": "replace", "path": "/a", "value": 1.0}]),
        ({"a": True}, {"a": 1}, [{"op": "replace", "path": "/a", "value": 1}]),
        ({"a/b": 1, "c": 2}, {"c": 2}, [{"op": "remove", "path": "/a~1b"}]),
    ],
)
def test_given_small_changes_then_minimal_operations(a: Any, b: Any, expected: list[dict[str, Any]]) -> None:
    assert diff(a, b) == expected
    assert _typed(apply_patch(a, expected)) == _typed(b)


def test_the_patch_does_not_share_values_with_the_output() -> None:
    # Given a patch that adds a nested value, When the output is changed afterwards, Then the patch is not
    after = {"title": "t", "extra": {"k": [1]}}
    ops = diff({"title": "t"}, after)
    after["extra"]["k"].append(2)
    assert ops == [{"op": "add", "path": "/extra", "value": {"k": [1]}}]


def _typed(value: Any) -> Any:
    """A value with each scalar tagged by its JSON type, so 1, 1.0 and true compare unequal."""
    if isinstance(value, dict):
        return {k: _typed(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_typed(v) for v in value]
    return (type(value).__name__, value)
