"""A re-ask: the simulated model acts on feedback about a whole quiz it wrote, in any validator's words."""

from __future__ import annotations

import json
import math
import random
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import pytest
from openai import OpenAI

from suture.contracts.failure import Failure
from suture.contracts.quiz import QuizContract
from suture.tasks.prompts import retry_messages
from suture.workers.simulator import PROFILES
from suture.workers.simulator.completion import answer
from suture.workers.simulator.profiles import Profile, ReaskSkill
from suture.workers.simulator.reask import named_items, read_reask
from suture.workers.simulator.reask_skill import reask_fix_rate
from suture.workers.simulator.request import ChatRequest

from .course import PHOTOSYNTHESIS, quiz_format, quiz_messages

IMBALANCED = "imbalanced_options"
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


def test_a_re_ask_over_http_fixes_what_a_validator_names(simulator: Callable[..., str]) -> None:
    # Given the realistic simulator behind the real openai SDK, and suture's quiz contract as validator
    client = OpenAI(base_url=simulator("realistic", seed=11), api_key="unused", max_retries=0)
    contract = QuizContract(15, source=PHOTOSYNTHESIS)
    named = fixed = unnamed = kept = 0
    for variant in range(6):
        messages = quiz_messages(extra=f" Variant {variant}.")
        first = client.chat.completions.create(
            model="gpt-5-nano", messages=messages, response_format=quiz_format(), reasoning_effort="low"
        )
        text = first.choices[0].message.content or ""
        broken = {
            int(f.pointer.split("/")[2]) for f in contract.validate(text).failures if f.code == IMBALANCED
        }
        # When the model is re-asked with Instructor's words for a validator's failures
        errors = "\n".join(f"- /questions/{i}/options: the correct option is the longest" for i in broken)
        again = client.chat.completions.create(
            model="gpt-5-nano",
            messages=[
                *messages,
                {"role": "assistant", "content": text},
                {
                    "role": "user",
                    "content": f"Correct your JSON ONLY RESPONSE, based on the following errors:\n{errors}",
                },
            ],
            response_format=quiz_format(),
            reasoning_effort="low",
        )
        after = json.loads(again.choices[0].message.content or "")
        still = {
            int(f.pointer.split("/")[2]) for f in contract.validate(after).failures if f.code == IMBALANCED
        }
        before = json.loads(text)["questions"]
        named += len(broken)
        fixed += len(broken - still)
        unnamed += 15 - len(broken)
        kept += sum(after["questions"][i] == before[i] for i in range(15) if i not in broken)
    # Then the named questions are fixed at nano@low's derived re-ask rate, the others mostly kept
    rate = reask_fix_rate(PROFILES["realistic"].traits("gpt-5-nano"), "low", ReaskSkill())
    assert named >= 20, named
    assert _within(fixed, named, rate), (fixed, named)
    assert _within(kept, unnamed, ReaskSkill().keep_rate), (kept, unnamed)
