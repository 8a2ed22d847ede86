"""A call's max_completion_tokens comes from what its contract expects of the reply, not from the ceiling."""

from __future__ import annotations

import json
import math

from suture.config.settings import REASONING_ALLOWANCE, ReasoningAllowance, Settings
from suture.contracts.quiz import TOKENS_PER_QUESTION, QuizContract
from suture.contracts.registry import get_contract
from suture.tasks.calls import ModelCall
from suture.tasks.reply_size import completion_cap, doubled_cap, reasoning_allowance
from suture.workers.model.wire import request_body, sized


def _call(expected: int | None, effort: str | None = "low", ceiling: int | None = None) -> ModelCall:
    return ModelCall(
        model="gpt-5-nano",
        messages=[{"role": "user", "content": "Write a quiz."}],
        schema_name="quiz",
        json_schema={"type": "object"},
        reasoning_effort=effort,  # type: ignore[arg-type]
        max_completion_tokens=ceiling,
        expected_reply_tokens=expected,
    )


def test_a_quiz_expects_its_questions_times_tokens_per_question() -> None:
    # Given quizzes of 5 and 15 questions
    five, fifteen = QuizContract(questions=5).reply_tokens(), QuizContract(questions=15).reply_tokens()
    # Then the expected reply grows by tokens per question, per question
    assert fifteen - five == 10 * TOKENS_PER_QUESTION
    assert 5 * TOKENS_PER_QUESTION < five < 6 * TOKENS_PER_QUESTION


def test_a_surgical_slice_expects_its_items_not_the_whole_quiz() -> None:
    # Given a quiz of 15 questions with 4 options of a few words
    quiz = QuizContract(questions=15)
    question = {"question": "Which gas is released?", "options": ["oxygen", "carbon", "neon", "argon"]}
    output = {"title": "T", "questions": [question] * 15}
    # When its slices are estimated
    options, one = (
        quiz.reply_tokens(output, "/questions/3/options"),
        quiz.reply_tokens(output, "/questions/3"),
    )
    # Then the options ask for their own size, a question for one question, both far below the quiz
    assert options < 40
    assert TOKENS_PER_QUESTION <= one < 2 * TOKENS_PER_QUESTION
    assert one * 10 < quiz.reply_tokens()


def test_a_contract_that_says_nothing_gets_the_default_estimate() -> None:
    # Given the outline contract, which does not override reply_tokens
    outline = get_contract("outline")
    example = outline.canonical_example()
    # Then a whole output expects its canonical example's size, a slice the value it replaces
    assert outline.reply_tokens() > 0
    first = next(iter(example))
    assert outline.reply_tokens(example, f"/{first}") <= outline.reply_tokens() + 8
    assert outline.reply_tokens(example, "/no_such_field") == outline.reply_tokens()


def test_the_cap_is_the_estimate_times_the_margin_plus_the_reasoning_allowance_within_the_ceiling() -> None:
    low = {"low": ReasoningAllowance(ratio=1.0, min_tokens=256)}
    # A reply of 1,000 tokens at low effort: 1,000 reasoning tokens allowed; of 50: the floor of 256
    assert reasoning_allowance(1_000, low, {}, "m", "low") == 1_000
    assert reasoning_allowance(50, low, {}, "m", "low") == 256
    # A model's own figure wins; an effort with no allowance allows none
    mine = {"m": {"low": ReasoningAllowance(ratio=2.0)}}
    assert reasoning_allowance(1_000, low, mine, "m", "low") == 2_000
    assert reasoning_allowance(1_000, low, {}, "m", "high") == 0
    assert completion_cap(1_000, margin=1.5, reasoning_tokens=1_000, ceiling=16_000) == 2_500
    assert completion_cap(1_000, margin=1.5, reasoning_tokens=1_000, ceiling=2_000) == 2_000
    assert completion_cap(None, margin=1.5, reasoning_tokens=1_000, ceiling=16_000) == 16_000
    # A cut reply is sent again with twice the cap, never past the ceiling, and not at all at it
    assert doubled_cap(2_500, 16_000) == 5_000
    assert doubled_cap(10_000, 16_000) == 16_000
    assert doubled_cap(16_000, 16_000) is None


def test_a_quiz_call_is_sent_with_its_contracts_estimate_as_its_cap() -> None:
    # Given the default settings and a 10-question quiz call at low effort
    settings = Settings()
    expected = QuizContract(questions=10).reply_tokens()
    # When it is sized for the wire
    body = request_body(_call(expected), settings)
    # Then it asks for the estimate x 1.5 + one estimate of reasoning, far below the 16,000 ceiling
    low = REASONING_ALLOWANCE["low"]
    want = math.ceil(expected * settings.client.reply_margin) + max(
        low.min_tokens, math.ceil(expected * low.ratio)
    )
    assert body["max_completion_tokens"] == want < settings.client.max_completion_tokens
    # And a call of no contract, or with its own ceiling, keeps the ceiling as its bound
    assert request_body(_call(None), settings)["max_completion_tokens"] == 16_000
    assert sized(_call(expected, ceiling=1_000), settings).max_completion_tokens == 1_000
    # And sizing twice changes nothing (the budget and the wire see the same cap)
    once = sized(_call(expected), settings)
    assert sized(once, settings) == once


def test_a_list_slice_expects_every_item_as_large_as_its_largest() -> None:
    # Given options whose correct answer is conspicuously the longest (the imbalance a repair fixes)
    quiz = QuizContract(questions=1)
    long = "the crown, whose debts had grown with every war it had fought in the decades before"
    output = {"title": "T", "questions": [{"options": [long, "taxes", "wars", "guilds"]}]}
    # When the options are estimated for their repair
    expected = quiz.reply_tokens(output, "/questions/0/options")
    # Then balanced options (every distractor as long as the answer) fit the estimate
    balanced = [
        long,
        long.replace("crown", "church"),
        long.replace("crown", "nobles"),
        long.replace("crown", "towns"),
    ]
    assert expected >= len(json.dumps(balanced)) // 4
