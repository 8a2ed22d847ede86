"""A deterministic fix through the job flow and a real Redis: an attempt task of its own, no model call."""

from __future__ import annotations

import json
from dataclasses import dataclass, field

import pytest
import redis

from suture.tasks.calls import ModelCall, ModelReply
from tests.fixtures.inline_flow import QUESTIONS, drain, inline_flow, new_job
from tests.fixtures.scripted_model import quiz

pytestmark = pytest.mark.integration


@pytest.fixture
def client(redis_url: str) -> redis.Redis:
    return redis.Redis.from_url(redis_url, decode_responses=True)


@dataclass
class SkewedCaller:
    """Answers every full call with a valid quiz whose correct answers all sit at option 1."""

    calls: list[str] = field(default_factory=list)

    def __call__(self, call: ModelCall) -> ModelReply:
        self.calls.append(call.schema_name)
        skewed = quiz(QUESTIONS, 0)
        for question in skewed["questions"]:
            options, index = question["options"], question["correct_answer_index"]
            options[0], options[index] = options[index], options[0]
            question["correct_answer_index"] = 0
        return ModelReply(model=call.model, text=json.dumps(skewed), finish_reason="stop")


def test_a_fix_runs_as_the_next_attempt_task_and_calls_no_model(client: redis.Redis) -> None:
    # Given a job whose first quiz is valid but for its answer positions (4 of 4 at option 1)
    caller = SkewedCaller()
    flow, dispatcher = inline_flow(client, caller)
    job_id = new_job(flow)
    # When its first attempt applies, Then the next task is attempt 2: the fix
    assert flow.attempt(job_id, 1) == "applied"
    assert dispatcher.sent == [("attempt", (job_id, 2))]
    # ...which applies without a model call and delivers the quiz
    assert drain(flow, dispatcher) == ["delivered"]
    assert caller.calls == ["quiz"]
    result = flow.store.result(job_id)
    assert result is not None and result["status"] == "delivered"
    modes = [(a["n"], a["mode"], a["model"]) for a in result["attempts"]]
    assert modes == [(1, "full", "gpt-5-nano"), (2, "fix", "fixer")]
    assert result["attempts"][1]["cost_usd"] == 0.0
    assert result["attempts"][1]["patch"]
    # And a redelivered fix task finds it applied
    assert flow.attempt(job_id, 2) == "already_ended"
