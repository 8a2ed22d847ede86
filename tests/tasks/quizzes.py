"""Test data for the engine: a source document, valid quizzes grounded in it, and scripted replies.

Scripted replies are the ``ModelReply`` values the model client would return; feeding them to the
pure step functions exercises the engine exactly as a driver does (no mocks involved).
"""

from __future__ import annotations

import copy
import json
from typing import Any

from suture.config.settings import ModelPrice
from suture.tasks.calls import ModelReply, Usage
from suture.tasks.spec import EngineOptions, JobSpec

PLACES = ["Alpha", "Bravo", "Delta", "Gamma", "Kappa", "Sigma", "Omega", "Theta"]
PRICES = {
    "gpt-5-nano": ModelPrice(input_per_1m_usd=0.05, cached_input_per_1m_usd=0.005, output_per_1m_usd=0.40),
    "gpt-5-mini": ModelPrice(input_per_1m_usd=0.25, cached_input_per_1m_usd=0.025, output_per_1m_usd=2.00),
}


# Stems open in turn with different words, as a varied quiz does (``repeated_stem_opening``).
STEMS = [
    "Where is crate {i} of the catalogue kept?",
    "In which warehouse does the catalogue keep crate {i}?",
    "Which warehouse holds crate {i} of the catalogue?",
    "According to the report, where is crate {i} kept?",
]


def sentence(i: int) -> str:
    return f"Crate {i} of the catalogue is kept in warehouse {PLACES[i % len(PLACES)]}."


def source(n: int = 15) -> str:
    return "Storage report.\n" + "\n".join(sentence(i) for i in range(n)) + "\n"


def question(i: int, position: int) -> dict[str, Any]:
    correct = f"Warehouse {PLACES[i % len(PLACES)]}"
    distractors = [f"Warehouse {p}" for p in PLACES if p != PLACES[i % len(PLACES)]][:3]
    options = [*distractors[:position], correct, *distractors[position:]]
    return {
        "question": STEMS[i % len(STEMS)].format(i=i),
        "options": options,
        "correct_answer_index": position,
        "correct_answer_text": correct,
        "explanation": f"The report says crate {i} is kept in warehouse {PLACES[i % len(PLACES)]}.",
        "source_quote": sentence(i),
    }


def valid_quiz(n: int = 15) -> dict[str, Any]:
    return {"title": "Storage report", "questions": [question(i, i % 4) for i in range(n)]}


def imbalance(quiz: dict[str, Any], indices: list[int]) -> dict[str, Any]:
    """A copy where the correct option of each question in ``indices`` is conspicuously long."""
    broken = copy.deepcopy(quiz)
    for i in indices:
        q = broken["questions"][i]
        long_text = q["correct_answer_text"] + ", the large northern storage site next to the old river port"
        q["options"][q["correct_answer_index"]] = long_text
        q["correct_answer_text"] = long_text
    return broken


def spec(n: int = 15, **options: Any) -> JobSpec:
    return JobSpec(
        job_id="job-1",
        contract="quiz",
        params={"questions": n},
        source=source(n),
        options=EngineOptions(prices=PRICES, **options),
    )


def reply(
    value: Any = None,
    *,
    model: str = "gpt-5-nano",
    text: str | None = None,
    finish_reason: str = "stop",
    output_tokens: int | None = None,
    **extra: Any,
) -> ModelReply:
    """A scripted reply carrying ``value`` as JSON text (or raw ``text``)."""
    body = text if text is not None else json.dumps(value)
    tokens = output_tokens if output_tokens is not None else max(1, len(body) // 4)
    usage = Usage(input_tokens=800, output_tokens=tokens, reasoning_tokens=tokens // 2)
    return ModelReply(
        model=model, text=body, finish_reason=finish_reason, usage=usage, latency_ms=100.0, **extra
    )


def slice_reply(value: Any, **kwargs: Any) -> ModelReply:
    return reply({"value": value}, **kwargs)
