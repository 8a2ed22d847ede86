"""The simulated model's answers: grounded, deterministic, biased at the configured rates."""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from typing import Any

import pytest
from openai import OpenAI

from contracts.quiz import QuizContract
from workers.simulator import PROFILES
from workers.simulator.completion import complete
from workers.simulator.request import ChatRequest

from .course import PHOTOSYNTHESIS, quiz_format, quiz_messages

QUIZZES_PER_MODEL = 40  # 600 questions per model
# Binomial sd of a rate near 0.37 over 600 questions is ~0.02; 0.06 is three of them.
RATE_TOLERANCE = 0.06


def _quiz(client: OpenAI, model: str, variant: int) -> tuple[str, str | None]:
    reply = client.chat.completions.create(
        model=model, messages=quiz_messages(extra=f" Variant {variant}."), response_format=quiz_format()
    )
    return reply.choices[0].message.content or "", reply.choices[0].finish_reason


@pytest.mark.parametrize("model", ["gpt-5-nano", "gpt-5-mini", "gpt-5"])
def test_realistic_imbalance_rate_matches_the_configured_rate(
    simulator: Callable[..., str], model: str
) -> None:
    # Given the realistic simulator and the real quiz contract
    client = OpenAI(base_url=simulator("realistic", seed=7), api_key="unused", max_retries=0)
    contract = QuizContract(15, source=PHOTOSYNTHESIS)
    # When the model writes many different full quizzes
    imbalanced = skewed = 0
    other_codes: set[str] = set()
    for variant in range(QUIZZES_PER_MODEL):
        verdict = contract.validate(*_quiz(client, model, variant)[:1])
        imbalanced += sum(f.code == "imbalanced_options" for f in verdict.failures)
        skewed += any(f.code == "answer_position_skew" for f in verdict.failures)
        other_codes |= set(verdict.codes()) - {"imbalanced_options", "answer_position_skew"}
    # Then the share of imbalanced questions is the model's configured rate
    measured = imbalanced / (QUIZZES_PER_MODEL * 15)
    assert measured == pytest.approx(PROFILES["realistic"].models[model].imbalance_rate, abs=RATE_TOLERANCE)
    # ...the position skew is mild (most quizzes pass the rule), and no other rule ever fails
    assert skewed / QUIZZES_PER_MODEL <= 0.2
    assert other_codes == set()


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_perfect_quizzes_pass_every_quiz_rule(simulator: Callable[..., str], seed: int) -> None:
    # Given the perfect profile
    client = OpenAI(base_url=simulator("perfect", seed=seed), api_key="unused", max_retries=0)
    contract = QuizContract(15, source=PHOTOSYNTHESIS)
    # When each model writes quizzes, Then every one passes the real contract (quotes verbatim, balanced...)
    for model in PROFILES["perfect"].models:
        for variant in range(5):
            verdict = contract.validate(*_quiz(client, model, variant)[:1])
            assert verdict.ok, verdict.failures


def test_same_prompt_same_answer_and_feedback_draws_afresh(simulator: Callable[..., str]) -> None:
    # Given one realistic simulator
    client = OpenAI(base_url=simulator("realistic", seed=3), api_key="unused", max_retries=0)
    # When the same prompt is sent twice and a prompt with feedback once
    first, second = _quiz(client, "gpt-5-nano", 0), _quiz(client, "gpt-5-nano", 0)
    other = client.chat.completions.create(
        model="gpt-5-nano",
        messages=quiz_messages(extra=" Variant 0.\n<failures>imbalanced_options</failures>"),
        response_format=quiz_format(),
    )
    # Then the bias is structural: identical answers; the changed prompt gets a different draw
    assert first == second
    assert other.choices[0].message.content != first[0]


def _slice_messages(question: dict[str, object], pointer: str) -> list[Any]:
    user = (
        f"Rewrite only the slice.\n<document>\n{PHOTOSYNTHESIS}\n</document>\n"
        f'<slice pointer="{pointer}">{json.dumps(question)}</slice>\n'
        f'<context pointer="{pointer}">{json.dumps(question)}</context>\n'
        "<failures>imbalanced_options</failures><invariants>correct_answer_index</invariants>"
    )
    return [{"role": "user", "content": user}]


def test_surgical_slices_fix_most_items_and_rarely_move_the_answer(simulator: Callable[..., str]) -> None:
    # Given imbalanced questions from nano's full quizzes
    client = OpenAI(base_url=simulator("realistic", seed=11), api_key="unused", max_retries=0)
    contract = QuizContract(1, source=PHOTOSYNTHESIS)
    broken = []
    for variant in range(30):
        quiz = json.loads(_quiz(client, "gpt-5-nano", variant)[0])
        broken += [q for q in quiz["questions"] if not contract.validate({"title": "t", "questions": [q]}).ok]
    # When each is sent back as a surgical slice request
    fixed = moved = 0
    for question in broken:
        reply = client.chat.completions.create(
            model="gpt-5-nano",
            messages=_slice_messages(question, "/questions/0"),
            response_format=quiz_format("quiz_slice"),
        )
        value = json.loads(reply.choices[0].message.content or "")["value"]
        fixed += contract.validate({"title": "t", "questions": [value]}).ok
        moved += value["correct_answer_index"] != question["correct_answer_index"]
        assert value["correct_answer_text"] == question["correct_answer_text"]
    # Then about 95% are balanced and about 3% moved the answer they were told to keep
    assert len(broken) > 100
    assert fixed / len(broken) == pytest.approx(0.95, abs=0.05)
    assert moved / len(broken) == pytest.approx(0.03, abs=0.03)


def test_options_slice_returns_the_option_list_with_the_answer_in_place(
    simulator: Callable[..., str],
) -> None:
    # Given a question and a request for its options only
    client = OpenAI(base_url=simulator("perfect"), api_key="unused", max_retries=0)
    question = json.loads(_quiz(client, "gpt-5-mini", 0)[0])["questions"][2]
    # When the slice /questions/2/options is requested
    reply = client.chat.completions.create(
        model="gpt-5-mini",
        messages=_slice_messages(question, "/questions/2/options"),
        response_format=quiz_format("quiz_slice"),
    )
    options = json.loads(reply.choices[0].message.content or "")["value"]
    # Then it is a list of 4 options with the correct answer where it was
    assert len(options) == 4
    assert options[question["correct_answer_index"]] == question["correct_answer_text"]


@pytest.mark.parametrize(
    ("model", "effort", "low_s", "high_s"),
    [("gpt-5-mini", "low", 10.0, 60.0), ("gpt-5-nano", "minimal", 3.0, 30.0), ("gpt-5", "high", 60.0, 400.0)],
)
def test_latency_at_scale_one_has_real_world_magnitudes(
    model: str, effort: str, low_s: float, high_s: float
) -> None:
    # Given a 15-question quiz answer of about 6,000 characters
    request = ChatRequest(model, quiz_messages(), "quiz", None, effort, None, None)
    text = "x" * 6000
    # When its completion is costed at latency scale 1.0 and at 0
    real = complete(request, text, None, PROFILES["realistic"], 1.0, random.Random(0))
    instant = complete(request, text, None, PROFILES["realistic"], 0.0, random.Random(0))
    # Then it takes tens of seconds (more with more reasoning), and nothing at scale 0
    assert low_s <= real.latency_s <= high_s
    assert instant.latency_s == 0
    assert real.completion_tokens == 1500 + real.reasoning_tokens
