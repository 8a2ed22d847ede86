"""Example tiers: choice by failure kind, accepted-output preference, and structural truncation."""

from __future__ import annotations

import json
from typing import Any

import pytest

from suture.contracts.examples import (
    CUT_MARK,
    AcceptedOutput,
    choose_example,
    estimate_tokens,
    pick_accepted,
    tier_order,
    truncate_to_tokens,
)
from suture.contracts.failure import Failure
from suture.contracts.registry import get_contract


def _f(kind: Any) -> Failure:
    return Failure(kind=kind, pointer="/questions/0", code="c", message="m")


@pytest.mark.parametrize(
    ("kinds", "order"),
    [
        (["parse"], (1, 3)),
        (["truncated"], (1, 3)),
        (["schema"], (1, 3)),
        (["schema", "rule"], (1, 3)),
        (["rule"], (2, 1, 3)),
        ([], (1, 3)),
    ],
)
def test_tier_order_by_failure_kind(kinds: list[Any], order: tuple[int, ...]) -> None:
    assert tier_order([_f(k) for k in kinds]) == order


def test_accepted_prefers_same_kind_then_most_recent() -> None:
    accepted = [
        AcceptedOutput(output="old-rule", repaired_kinds=["rule"]),
        AcceptedOutput(output="new-schema", repaired_kinds=["schema"]),
        AcceptedOutput(output="newest", repaired_kinds=[]),
    ]
    assert pick_accepted(accepted, {"rule"}) == "old-rule"
    assert pick_accepted(accepted, {"preserve"}) == "newest"
    assert pick_accepted([], {"rule"}) is None


@pytest.mark.parametrize(
    ("kind", "accepted", "tier"), [("rule", True, 2), ("rule", False, 1), ("parse", True, 1)]
)
def test_choose_example_uses_the_contract_tiers(kind: Any, accepted: bool, tier: int) -> None:
    contract = get_contract("quiz", questions=3)
    pool = [AcceptedOutput(output={"title": "accepted"})] if accepted else []
    example = choose_example(contract, [_f(kind)], pool, budget_tokens=2000)
    assert example is not None and example.tier == tier
    assert example.tokens == estimate_tokens(example.text)


@pytest.mark.parametrize("budget", [40, 120, 400])
def test_truncation_keeps_the_skeleton_within_budget_and_marks_the_cut(budget: int) -> None:
    value = {"title": "T" * 50, "questions": [{"question": "Q" * 300, "options": ["o" * 40] * 4}] * 15}
    text, truncated = truncate_to_tokens(value, budget)
    assert truncated and estimate_tokens(text) <= budget
    assert CUT_MARK in text
    if budget >= 120:
        kept = json.loads(text)  # still JSON with the same keys: the skeleton survives
        assert set(kept) == {"title", "questions"} and set(kept["questions"][0]) == {"question", "options"}


def test_small_examples_are_not_truncated_and_zero_budget_means_none() -> None:
    assert truncate_to_tokens({"a": 1}, 100) == ('{"a":1}', False)
    assert choose_example(get_contract("quiz"), [], budget_tokens=0) is None
