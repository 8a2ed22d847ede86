"""A batch's accepted outputs in Redis, and example tier 2 for a later job of the batch through the
cluster."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import redis

from suture.workers.errors import StoreUnavailable
from suture.workers.flow.accepted import AcceptedOutputs, accepted_from
from suture.workers.producer import enqueue
from suture.workers.runtime.app import configure
from suture.workers.store.job_store import get_store
from tests.fixtures.scripted_model import document
from tests.fixtures.workers import CeleryStack

RULE = {"kind": "rule", "pointer": "/questions/0/options", "code": "imbalanced_options", "message": "m"}


def result(status: str = "delivered", failures: list[Any] | None = None, output: Any = "q") -> dict[str, Any]:
    """A job result with one repaired attempt (a rule failure) then a final one."""
    attempts = [{"failures": [RULE]}, {"failures": failures or []}]
    return {"status": status, "failures": failures or [], "output": output, "attempts": attempts}


@pytest.fixture
def outputs(redis_url: str) -> AcceptedOutputs:
    client = redis.Redis.from_url(redis_url, decode_responses=True)
    return AcceptedOutputs(client, limit=3, ttl_s=600, prefix=f"t{uuid.uuid4().hex}")


@pytest.mark.parametrize(
    ("given", "kept"),
    [
        (result(), True),
        (result("soft_delivered", [RULE]), False),
        (result("delivered", [RULE]), False),  # a watchdog delivery that still had failures
        (result("failed", output=None), False),
        (result("refused", output=None), False),
    ],
)
def test_only_fully_valid_deliveries_are_kept(outputs: AcceptedOutputs, given: dict, kept: bool) -> None:
    # Given a result / When it is offered to its batch / Then only a fully valid one is kept
    assert outputs.add("b", given) is kept
    assert len(outputs.recent("b")) == int(kept)


def test_the_list_is_bounded_recent_last_in_engine_order_and_keeps_repaired_kinds(
    outputs: AcceptedOutputs,
) -> None:
    # Given five valid results of one batch and one of another
    for i in range(5):
        outputs.add("b", result(output=f"quiz-{i}"))
    outputs.add("other", result(output="elsewhere"))
    # When the batch's outputs are read / Then the three most recent come oldest first, with their kinds
    recent = outputs.recent("b")
    assert [a.output for a in recent] == ["quiz-2", "quiz-3", "quiz-4"]
    assert {tuple(a.repaired_kinds) for a in recent} == {("rule",)}
    assert accepted_from(result(output="x")) is not None


def test_an_unreachable_redis_is_a_store_error() -> None:
    outputs = AcceptedOutputs(redis.Redis(port=1, socket_connect_timeout=0.5), limit=3, ttl_s=60)
    with pytest.raises(StoreUnavailable, match="unavailable"):
        outputs.recent("b")


@pytest.mark.integration
def test_a_later_job_of_the_batch_retries_with_an_accepted_output_as_example(
    celery_stack: Callable[..., CeleryStack], scripted_model: Callable[..., Any], tmp_path: Path
) -> None:
    # Given a model whose first quiz has one imbalanced question, and a full-retry policy with examples
    model = scripted_model(questions=4, imbalanced=1)
    stack = celery_stack(model.base_url)
    configure(stack.settings)
    stack.start_worker(concurrency=8)
    # (its rules as data, stored with each job: a policy file the CLI read, as `--policy FILE` stores it)
    retry = {
        "feedback": True,
        "examples": True,
        "steps": [{"mode": "full", "model": "gpt-5-nano"}, {"mode": "full", "model": "gpt-5-mini"}],
    }
    doc = document(4)
    # And a first job of batch b1 repaired surgically to a fully valid delivery
    first = enqueue("quiz", doc, questions=4, batch="b1", settings=stack.settings).result(timeout_s=60)
    assert first["status"] == "delivered" and first["failures"] == []
    # When a second job of b1 and one of another batch fail the same rule on their first attempt
    same = enqueue(
        "quiz", doc, questions=4, policy="retry", policy_rules=retry, batch="b1", settings=stack.settings
    )
    other = enqueue(
        "quiz", doc, questions=4, policy="retry", policy_rules=retry, batch="b2", settings=stack.settings
    )
    same_result, other_result = same.result(timeout_s=60), other.result(timeout_s=60)
    # Then the b1 retry shows the accepted output (tier 2), the other batch's the canonical one (tier 1)
    assert [a["example_tier"] for a in same_result["attempts"]] == [1, 2]
    assert [a["example_tier"] for a in other_result["attempts"]] == [1, 1]
    # And the soft-delivered jobs were not kept as examples
    store = get_store(stack.settings)
    kept = AcceptedOutputs(store.redis, limit=20, ttl_s=60, prefix=store.prefix)
    assert [(a.output, a.repaired_kinds) for a in kept.recent("b1")] == [(first["output"], ["rule"])]
    assert same_result["status"] == other_result["status"] == "soft_delivered"
