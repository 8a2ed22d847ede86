"""The poison cap counts only executions that did not end: outages and clean re-runs never fail a job.

A flow runs in-process against a real Redis (``tests.fixtures.inline_flow``); Redis outages are real
(a private redis-server with AOF, SIGKILLed and started again mid-step), and an execution that was
SIGKILLed is what it leaves in the store: a task opened under a token that never closed.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
import redis

from suture.tasks.calls import ModelCall, ModelReply
from suture.workers.errors import StoreUnavailable
from suture.workers.flow.kept_replies import KeptReplies
from tests.fixtures.inline_flow import ScriptedCaller, drain, inline_flow, new_job
from tests.fixtures.redis_server import RedisServer

pytestmark = pytest.mark.integration


@pytest.fixture
def client(redis_url: str) -> redis.Redis:
    return redis.Redis.from_url(redis_url, decode_responses=True)


def test_in_process_reruns_through_redis_outages_count_as_one_execution(
    redis_factory: Callable[..., RedisServer],
) -> None:
    # Given a cap of one execution (max_redeliveries 0) and a Redis that dies under the step 3 times:
    # each time the model call returns, Redis is SIGKILLed, so the step's save fails (AOF keeps the data)
    server = redis_factory(appendonly=True)
    outages = 3
    scripted = ScriptedCaller()

    def caller(call: ModelCall) -> ModelReply:
        if len(scripted.calls) < outages:
            server.kill()
        return scripted(call)

    flow, dispatcher = inline_flow(
        redis.Redis.from_url(server.url, decode_responses=True), caller, max_redeliveries=0
    )
    # Each re-run must call the model (the call is what kills Redis here): no reply kept for the re-run
    flow.kept = KeptReplies(limit=0)
    job_id = new_job(flow)
    # When one execution (one token) re-runs the step after each outage, as the task does in-process
    outcomes: list[str] = []
    for _ in range(outages + 1):
        try:
            outcomes.append(flow.attempt(job_id, 1, token="execution-1"))
        except StoreUnavailable:
            outcomes.append("outage")
            server.start()
    # Then it was never taken for a poison: it applied after the outages and the job is delivered
    assert outcomes == ["outage"] * outages + ["delivered"]
    assert dispatcher.give_ups() == []
    assert flow.store.result(job_id)["status"] == "delivered"  # type: ignore[index]


def test_a_requeued_message_after_an_outage_counts_again(redis_factory: Callable[..., RedisServer]) -> None:
    # Given the same cap and one outage that the execution leaves through (its close cannot reach Redis)
    server = redis_factory(appendonly=True)
    scripted = ScriptedCaller()

    def caller(call: ModelCall) -> ModelReply:
        server.kill()
        return scripted(call)

    flow, dispatcher = inline_flow(
        redis.Redis.from_url(server.url, decode_responses=True), caller, max_redeliveries=0
    )
    job_id = new_job(flow)
    with pytest.raises(StoreUnavailable):
        flow.attempt(job_id, 1, token="execution-1")
    server.start()
    # When the message comes back as a new execution (a new token) / Then it counts: the cap of 1 is hit.
    # This is the documented cost of an outage that outlasts the in-process re-runs.
    assert flow.attempt(job_id, 1, token="execution-2") == "poisoned"
    assert dispatcher.give_ups() == [
        "task attempt:1 was started 2 times without finishing (limit 1); giving up"
    ]


def test_openings_that_end_without_applying_never_poison_the_job(client: redis.Redis) -> None:
    # Given a cap of one execution and a job whose first quiz has 2 questions to repair surgically
    flow, dispatcher = inline_flow(client, ScriptedCaller(imbalanced=2), max_redeliveries=0)
    job_id = new_job(flow)
    assert flow.attempt(job_id, 1) == "applied"
    slices = [args for name, args in dispatcher.sent if name == "slice"]
    assert [pointer for _, _, pointer in slices] == ["/questions/0/options", "/questions/1/options"]
    # When its merge and a slice of another question open again and again before the slices are in
    # (duplicates, stall nudges), each ending without applying
    early = [flow.merge(job_id, 2) for _ in range(5)] + [
        flow.surgical_slice(job_id, 2, "/questions/3") for _ in range(5)
    ]
    # Then none counted: the real slices and merge apply, and the job is delivered, repaired
    assert early == ["incomplete"] * 5 + ["stale"] * 5
    assert drain(flow, dispatcher) == ["stored", "stored", "delivered"]
    assert dispatcher.give_ups() == []
    result = flow.store.result(job_id)
    assert result is not None and result["status"] == "delivered"
    assert [a["mode"] for a in result["attempts"]] == ["full", "surgical"]


@pytest.mark.parametrize(("killed", "outcome"), [(2, "delivered"), (3, "poisoned")])
def test_executions_that_never_ended_poison_the_job_past_the_cap(
    client: redis.Redis, killed: int, outcome: str
) -> None:
    # Given a cap of 3 executions (max_redeliveries 2) and `killed` executions of attempt 1 that opened
    # it and never ended (what a SIGKILLed worker leaves behind)
    caller = ScriptedCaller()
    flow, dispatcher = inline_flow(client, caller, max_redeliveries=2)
    job_id = new_job(flow)
    for k in range(killed):
        flow.store.open_task(job_id, "attempt:1", token=f"killed-{k}")
    # When the message is delivered once more
    # Then past the cap the job gives up, naming the task and the count, without calling the model
    assert flow.attempt(job_id, 1) == outcome
    if outcome == "poisoned":
        assert dispatcher.give_ups() == [
            "task attempt:1 was started 4 times without finishing (limit 3); giving up"
        ]
        assert caller.calls == []
        assert dispatcher.causes() == ["worker_lost"]
        assert drain(flow, dispatcher) == ["failed:worker_lost"]
    else:
        assert (dispatcher.give_ups(), caller.calls) == ([], ["full"])
