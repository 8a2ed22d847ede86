"""The simulated model's answers: grounded, deterministic, biased at the configured rates."""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from typing import Any

import pytest
from openai import OpenAI

from suture.contracts.quiz import QuizContract
from suture.tasks.prompts import SliceParts, slice_messages
from suture.tasks.surgery import ELIDED
from suture.workers.simulator import PROFILES
from suture.workers.simulator.completion import complete
from suture.workers.simulator.repair_skill import slice_fix_rate
from suture.workers.simulator.request import ChatRequest

from .course import PHOTOSYNTHESIS, quiz_format, quiz_messages

GIVEAWAY_CODES = (
    "answer_in_stem",
    "long_blank_answer",
    "distractor_overlaps_answer",
    "section_number_in_text",
    "repeated_stem_opening",
)
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
    imbalanced = skewed = repeated = 0
    other_codes: set[str] = set()
    for variant in range(QUIZZES_PER_MODEL):
        verdict = contract.validate(*_quiz(client, model, variant)[:1])
        imbalanced += sum(f.code == "imbalanced_options" for f in verdict.failures)
        skewed += any(f.code == "answer_position_skew" for f in verdict.failures)
        repeated += sum(f.code == "duplicate_question" for f in verdict.failures)
        other_codes |= set(verdict.codes()) - {
            "imbalanced_options",
            "answer_position_skew",
            "duplicate_question",
            *GIVEAWAY_CODES,  # the model's give-away habits (``stems``), measured in test_stems.py
        }
    # Then the share of imbalanced questions is the model's configured rate
    measured = imbalanced / (QUIZZES_PER_MODEL * 15)
    assert measured == pytest.approx(PROFILES["realistic"].models[model].imbalance_rate, abs=RATE_TOLERANCE)
    # ...the position skew is mild (most quizzes pass the rule), repeated questions are rare (the
    # document has more sentences than questions, so only the model's own repeat rate shows), and no
    # other rule ever fails
    assert skewed / QUIZZES_PER_MODEL <= 0.2
    repeat_rate = PROFILES["realistic"].models[model].duplicate_rate
    assert repeated / (QUIZZES_PER_MODEL * 14) <= repeat_rate + 0.015
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


def _slice_messages(question: dict[str, Any], pointer: str) -> list[Any]:
    """A lean slice prompt exactly as the engine builds it: the question's excerpt, not the document."""
    options_slice = pointer.endswith("/options")
    parts = SliceParts(
        pointer=pointer,
        value=question["options"] if options_slice else question,
        excerpts=(question["source_quote"],),
        document=None,
        context_pointer=pointer.removesuffix("/options"),
        context={**question, "options": ELIDED} if options_slice else None,
        failures=[],
        invariants=[],
    )
    return slice_messages("Repair the slice.", parts)


def _broken_questions(client: OpenAI, contract: QuizContract, quizzes: int) -> list[dict[str, Any]]:
    broken = []
    for variant in range(quizzes):
        quiz = json.loads(_quiz(client, "gpt-5-nano", variant)[0])
        broken += [q for q in quiz["questions"] if not contract.validate({"title": "t", "questions": [q]}).ok]
    return broken


def _slice(client: OpenAI, model: str, question: dict[str, Any], pointer: str, effort: Any = "low") -> Any:
    reply = client.chat.completions.create(
        model=model,
        messages=_slice_messages(question, pointer),
        response_format=quiz_format("quiz_slice"),
        reasoning_effort=effort,
    )
    return json.loads(reply.choices[0].message.content or "")["value"]


@pytest.mark.parametrize(
    ("model", "effort"), [("gpt-5-nano", "low"), ("gpt-5-mini", "low"), ("gpt-5-nano", "high")]
)
def test_slices_fix_items_at_the_rate_derived_for_the_model_and_effort(
    simulator: Callable[..., str], model: str, effort: str
) -> None:
    # Given imbalanced questions from nano's full quizzes
    client = OpenAI(base_url=simulator("realistic", seed=11), api_key="unused", max_retries=0)
    contract = QuizContract(1, source=PHOTOSYNTHESIS)
    broken = _broken_questions(client, contract, 60)
    # When each one's options are sent back as a lean slice request to the model at the effort
    balanced = 0
    for question in broken:
        options = _slice(client, model, question, "/questions/0/options", effort)
        verdict = contract.validate({"title": "t", "questions": [{**question, "options": options}]})
        balanced += "imbalanced_options" not in verdict.codes()
    # Then the share balanced is the model's derived slice fix rate at that effort
    expected = slice_fix_rate(PROFILES["realistic"].traits(model), effort)
    assert len(broken) > 250
    assert balanced / len(broken) == pytest.approx(expected, abs=0.035)


def test_derived_fix_rates_grow_with_a_smaller_bias_and_more_reasoning() -> None:
    traits = PROFILES["realistic"].models
    nano, mini = traits["gpt-5-nano"], traits["gpt-5-mini"]
    assert slice_fix_rate(nano, "low") == pytest.approx(0.95)
    assert slice_fix_rate(nano, "minimal") < slice_fix_rate(nano, "low") < slice_fix_rate(nano, "high")
    assert slice_fix_rate(nano, "low") < slice_fix_rate(mini, "low") < slice_fix_rate(traits["gpt-5"], "low")
    assert all(
        slice_fix_rate(t, e) == 1.0 for t in PROFILES["perfect"].models.values() for e in ("low", None)
    )


def test_whole_question_slices_keep_the_answer_text_and_sometimes_reorder_the_options(
    simulator: Callable[..., str],
) -> None:
    # Given imbalanced questions from nano's full quizzes
    client = OpenAI(base_url=simulator("realistic", seed=5), api_key="unused", max_retries=0)
    broken = _broken_questions(client, QuizContract(1, source=PHOTOSYNTHESIS), 30)
    # When each whole question is sent back as a slice
    moved = 0
    for question in broken:
        value = _slice(client, "gpt-5-nano", question, "/questions/0")
        # Then its correct answer's text is kept, and the index always points at it
        assert value["correct_answer_text"] == question["correct_answer_text"]
        assert value["options"][value["correct_answer_index"]] == value["correct_answer_text"]
        moved += value["correct_answer_index"] != question["correct_answer_index"]
    # ...and the answer moved with reordered options (or a drift) in about a quarter of them
    profile = PROFILES["realistic"]
    # A reorder leaves the answer where it was in one case of four: 3/4 of the reorders move it.
    expected = profile.surgical_drift_rate + profile.question_reorder_rate * 3 / 4
    assert len(broken) > 100
    assert moved / len(broken) == pytest.approx(expected, abs=0.08)


def test_options_slice_returns_the_option_list_with_the_answer_in_place(
    simulator: Callable[..., str],
) -> None:
    # Given a question and a lean request for its options only
    client = OpenAI(base_url=simulator("perfect"), api_key="unused", max_retries=0)
    question = json.loads(_quiz(client, "gpt-5-mini", 0)[0])["questions"][2]
    # When the slice /questions/2/options is requested
    options = _slice(client, "gpt-5-mini", question, "/questions/2/options")
    # Then it is a list of 4 options with the correct answer where it was
    assert len(options) == 4
    assert options[question["correct_answer_index"]] == question["correct_answer_text"]


@pytest.mark.parametrize("pointer", ["/questions/0", "/questions/0/options"])
def test_when_index_and_answer_text_disagree_the_simulator_follows_the_text(
    simulator: Callable[..., str], pointer: str
) -> None:
    # Given a question whose index points at option 0 while its answer text is option 2
    client = OpenAI(base_url=simulator("perfect"), api_key="unused", max_retries=0)
    question = json.loads(_quiz(client, "gpt-5-mini", 0)[0])["questions"][0]
    question["options"] = [f"Pigment {k}" for k in "ABCD"]
    question |= {"correct_answer_index": 0, "correct_answer_text": "Pigment C"}
    # When a slice of it is repaired
    value = _slice(client, "gpt-5-mini", question, pointer)
    # Then the answer kept is the text, at the text's position
    options = value if pointer.endswith("options") else value["options"]
    assert options[2] == "Pigment C"
    if not pointer.endswith("options"):
        assert (value["correct_answer_index"], value["correct_answer_text"]) == (2, "Pigment C")


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
