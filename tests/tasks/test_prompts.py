"""Prompt builders: byte-deterministic retry prompts (fuzzed), the slice tags, and redaction."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from suture.contracts.failure import Failure
from suture.tasks.prompts import DELTA_INSTRUCTION, canonical_json, redact, redact_messages, retry_prompt

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=20,
)
failures = st.lists(
    st.builds(
        Failure,
        kind=st.sampled_from(["schema", "rule", "parse"]),
        pointer=st.sampled_from(["/", "/questions/0", "/questions/1/options", "/title"]),
        code=st.text(min_size=1, max_size=10),
        message=st.text(max_size=40),
    ),
    max_size=5,
)


@given(original=st.text(), output=json_values, found=failures)
def test_retry_prompt_is_byte_identical_for_equal_inputs(
    original: str, output: Any, found: list[Failure]
) -> None:
    # Given equal (but distinct) inputs, When the prompt is built twice, Then the bytes are equal
    first = retry_prompt(original, output, found)
    second = retry_prompt(original, copy.deepcopy(output), [f.model_copy() for f in found])
    assert first.encode() == second.encode()
    assert first.startswith(original) and first.endswith(DELTA_INSTRUCTION)


@given(st.dictionaries(st.text(max_size=6), st.integers(), min_size=2, max_size=6))
def test_previous_output_key_order_does_not_matter(data: dict[str, int]) -> None:
    reordered = dict(reversed(list(data.items())))
    assert retry_prompt("p", data, []) == retry_prompt("p", reordered, [])


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ({"b": 1, "a": 2}, '{\n  "a": 2,\n  "b": 1\n}'),
        ({1: "x", "a": "y"}, '{\n  "1": "x",\n  "a": "y"\n}'),  # unsortable keys: insertion order
        ({"when": {1, 2}}, "{'when': {1, 2}}"),  # not JSON: repr
    ],
)
def test_canonical_json_falls_back_to_insertion_order_then_repr(value: Any, expected: str) -> None:
    assert canonical_json(value) == expected


def test_retry_prompt_lists_failures_by_pointer_and_message() -> None:
    found = [
        Failure(kind="rule", pointer="/questions/2/options", code="imbalanced_options", message="Too long.")
    ]
    text = retry_prompt("<document>\nD\n</document>", {"title": "T"}, found)
    assert "<previous_output>\n" + json.dumps({"title": "T"}, indent=2) in text
    assert "- /questions/2/options: Too long. [imbalanced_options]" in text


@pytest.mark.parametrize(
    ("text", "secrets", "expected"),
    [
        ("key sk-abc and sk-abcdef", ["sk-abc", "sk-abcdef"], "key [REDACTED] and [REDACTED]"),
        ("nothing here", ["sk-abc"], "nothing here"),
        ("empty secret", [""], "empty secret"),
    ],
)
def test_redaction(text: str, secrets: list[str], expected: str) -> None:
    assert redact(text, secrets) == expected
    assert redact_messages([{"role": "user", "content": text}], secrets)[0]["content"] == expected
