"""A re-ask: the simulated model acts on feedback about a whole quiz it wrote, in any validator's words."""

from __future__ import annotations

import json
import math
import random
from dataclasses import replace
from typing import Any

import pytest

from suture.contracts.failure import Failure
from suture.tasks.prompts import retry_messages
from suture.workers.simulator import PROFILES
from suture.workers.simulator.completion import answer
from suture.workers.simulator.profiles import Profile, ReaskSkill
from suture.workers.simulator.reask import named_items, read_reask
from suture.workers.simulator.reask_skill import reask_fix_rate
from suture.workers.simulator.request import ChatRequest

from .course import quiz_messages

NAMED = (0, 3, 7, 11, 14)  # the questions each feedback names (from 0)
REASKS = 60  # 300 named and 600 unnamed questions


def _always_biased(fix_rate: float, keep_rate: float) -> Profile:
    """nano with every fresh single-answer question imbalanced, so only a fix balances one."""
    realistic = PROFILES["realistic"]
    nano = replace(realistic.traits("gpt-5-nano"), imbalance_rate=1.0, duplicate_rate=0.0)
    return replace(
        realistic, models={**realistic.models, "gpt-5-nano": nano}, reask=ReaskSkill(fix_rate, keep_rate)
    )


def _ask(profile: Profile, messages: list[dict[str, Any]], seed: int) -> dict[str, Any]:
    request = ChatRequest("gpt-5-nano", messages, "quiz", None, "low", None, None)
    return json.loads(answer(request, profile, random.Random(seed)))


def _within(observed: int, trials: int, rate: float) -> bool:
    """True when ``observed`` successes in ``trials`` lie within 4 binomial standard deviations of
    ``rate``."""
    return abs(observed - trials * rate) <= 4 * math.sqrt(trials * rate * (1 - rate)) + 1


def _balanced(question: dict[str, Any]) -> bool:
    correct = len(question["correct_answer_text"])
    return correct <= 1.5 * max(len(o) for o in question["options"] if o != question["correct_answer_text"])


@pytest.mark.parametrize("fix_rate, keep_rate", [(0.7, 0.8), (0.3, 0.95)])
def test_named_items_are_fixed_at_the_fix_rate_and_unnamed_ones_kept_at_the_keep_rate(
    fix_rate: float, keep_rate: float
) -> None:
    # Given a model whose every fresh question is imbalanced, and re-asks naming 5 of 15 questions
    profile = _always_biased(fix_rate, keep_rate)
    fixed = kept = 0
    for seed in range(REASKS):
        first = _ask(profile, quiz_messages(extra=f" Variant {seed}."), seed)
        feedback = "\n".join(
            f"/questions/{i}: the correct option is the longest [imbalanced_options]" for i in NAMED
        )
        messages = [
            *quiz_messages(extra=f" Variant {seed}."),
            {"role": "assistant", "content": json.dumps(first)},
            {"role": "user", "content": f"Correct your JSON, based on the following errors:\n{feedback}"},
        ]
        # When the model is re-asked with that feedback
        again = _ask(profile, messages, 1000 + seed)["questions"]
        fixed += sum(_balanced(again[i]) for i in NAMED)
        kept += sum(again[i] == first["questions"][i] for i in range(15) if i not in NAMED)
    # Then the named questions come back balanced at the fix rate, the others unchanged at the keep rate
    assert _within(fixed, REASKS * len(NAMED), fix_rate), fixed
    assert _within(kept, REASKS * (15 - len(NAMED)), keep_rate), kept


def test_feedback_naming_no_item_redraws_the_whole_quiz() -> None:
    # Given a quiz and a plain "try again" after it
    profile = _always_biased(0.95, 0.95)
    first = _ask(profile, quiz_messages(), 0)
    messages = [
        *quiz_messages(),
        {"role": "assistant", "content": json.dumps(first)},
        {"role": "user", "content": "Please write the quiz again."},
    ]
    # When the model is re-asked
    again = _ask(profile, messages, 1)["questions"]
    # Then no question is fixed: every one is drawn afresh at the model's bias
    assert sum(_balanced(q) for q in again) == 0
    assert sum(q == p for q, p in zip(again, first["questions"], strict=True)) <= 1


def test_suture_full_attempts_with_feedback_are_re_asks_too() -> None:
    # Given suture's own retry prompt: the earlier quiz in <previous_output>, the failures after it
    profile = _always_biased(1.0, 1.0)
    first = _ask(profile, quiz_messages(), 0)
    failures = [
        Failure(kind="rule", code="imbalanced_options", pointer=f"/questions/{i}", message="too long")
        for i in NAMED
    ]
    messages = retry_messages("You write quizzes.", quiz_messages()[1]["content"], first, failures)
    # When the model answers it
    again = _ask(profile, messages, 1)["questions"]
    # Then exactly the named questions are rewritten (and fixed), the others kept
    assert [i for i in range(15) if again[i] != first["questions"][i]] == list(NAMED)
    assert all(_balanced(again[i]) for i in NAMED)


def test_items_are_named_the_ways_validators_name_them() -> None:
    feedback = (
        "/questions/3: too long\n"
        "questions.5 is wrong; questions[6] too\n"
        "1 validation error: loc ('questions', 8, 'options')\n"
        '{"loc": ["questions", 9], "msg": "bad"}\n'
        "Question 11 is ambiguous, and question #13 too"
    )
    assert named_items(feedback) == {3, 5, 6, 8, 9, 10, 12}
    assert named_items("Please write the quiz again. The document has 15 questions.") == frozenset()


def test_a_request_without_an_earlier_quiz_is_no_re_ask() -> None:
    assert read_reask(quiz_messages()) is None
    assert (
        read_reask(
            [
                *quiz_messages(),
                {"role": "assistant", "content": "not json"},
                {"role": "user", "content": "/questions/1"},
            ]
        )
        is None
    )


def test_the_derived_fix_rate_follows_the_model_and_effort_and_a_setting_wins() -> None:
    traits = PROFILES["realistic"].models
    nano, mini = traits["gpt-5-nano"], traits["gpt-5-mini"]
    derived = ReaskSkill()
    assert reask_fix_rate(nano, "low", derived) == pytest.approx(0.90, abs=0.005)
    assert reask_fix_rate(nano, "minimal", derived) < reask_fix_rate(nano, "high", derived)
    assert reask_fix_rate(nano, "low", derived) < reask_fix_rate(mini, "low", derived)
    assert reask_fix_rate(nano, "low", ReaskSkill(0.5)) == 0.5
