"""Nothing lost, nothing twice: a worker SIGKILLed in the middle of model calls while 200 jobs run."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable
from typing import Any

import pytest
import redis

from suture.workers.producer import JobHandle, enqueue
from suture.workers.runtime.app import configure
from suture.workers.store.job_store import get_store
from tests.fixtures.scripted_model import document
from tests.fixtures.workers import CeleryStack, WebhookReceiver

pytestmark = pytest.mark.integration

JOBS = 200


@pytest.mark.timeout(240)
def test_killing_a_worker_mid_calls_loses_and_duplicates_nothing(
    celery_stack: Callable[..., CeleryStack],
    scripted_model: Callable[..., Any],
    webhook_receiver: WebhookReceiver,
) -> None:
    # Given two workers and a model with small but real latency whose first quizzes need 2 slices
    model = scripted_model(questions=4, imbalanced=2, latency_s=0.3)
    stack = celery_stack(model.base_url)
    configure(stack.settings)
    victim = stack.start_worker(concurrency=40)
    stack.start_worker(concurrency=40)
    handles = [
        enqueue("quiz", document(4), questions=4, callback=webhook_receiver.url, settings=stack.settings)
        for _ in range(JOBS)
    ]
    # When the first worker is SIGKILLed while model calls are in flight, and a fresh one joins
    _wait_until(lambda: sum(model.requests.values()) >= JOBS // 2, timeout_s=60)
    victim.kill()
    stack.start_worker(concurrency=40)
    results = [h.result(timeout_s=150) for h in handles]
    # Then every job ended delivered exactly once, none lost, none twice, and traces have no duplicates
    assert Counter(r["status"] for r in results) == {"delivered": JOBS}
    assert sorted(r["job_id"] for r in results) == sorted(h.id for h in handles)
    for handle, result in zip(handles, results, strict=True):
        assert [a["n"] for a in result["attempts"]] == [1, 2], handle.id
        assert [a["mode"] for a in result["attempts"]] == ["full", "surgical"]
        assert len(result["attempts"][1]["slices"]) == 2
        assert get_store(stack.settings).history(handle.id) == []
    _wait_until(lambda: len(webhook_receiver.received) == JOBS, timeout_s=30)
    # Webhooks are at-least-once over HTTP (a sender killed after its POST resends, with the same
    # Idempotency-Key); only a POST interrupted by the one kill may repeat.
    repeats = sum(count - 1 for count in webhook_receiver.received.values())
    assert repeats <= 1
    assert _killed_mid_call(stack, handles) > 0


def _killed_mid_call(stack: CeleryStack, handles: list[JobHandle]) -> int:
    """How many tasks an execution died in (the kill really interrupted work), from the store's counters.

    A task that applied keeps its own execution counted: one more means an execution died before the end.
    """
    client = redis.Redis.from_url(str(stack.settings.redis_url), decode_responses=True)
    redelivered = 0
    for handle in handles:
        counters = client.hgetall(f"suture:job:{handle.id}:flags")
        redelivered += sum(1 for k, v in counters.items() if k.startswith("unfinished:") and int(v) > 1)
    return redelivered


def _wait_until(condition: Callable[[], bool], timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, "condition not met in time"
        time.sleep(0.05)


def test_a_poison_task_ends_its_job_failed_with_a_reason(
    celery_stack: Callable[..., CeleryStack], scripted_model: Callable[..., Any]
) -> None:
    # Given a job whose first attempt has already been started as often as the cap allows, by
    # executions that never finished (what SIGKILLed workers leave behind)
    model = scripted_model(questions=4)
    stack = celery_stack(model.base_url, SUTURE_WORKER__MAX_REDELIVERIES="2")
    app = configure(stack.settings)
    store = get_store(stack.settings)
    job_id, *_ = store.create(
        "poison", {"contract": "quiz", "params": {}, "input": document(4)}, deadline_s=1e10
    )
    for _ in range(3):
        store.open_task(job_id, "attempt:1")
    # When it is delivered once more
    app.send_task("suture.attempt", args=[job_id, 1], queue="suture.model")
    stack.start_worker(concurrency=4)
    result = JobHandle(job_id, stack.settings).result(timeout_s=30)
    # Then the job fails, naming the task and the count, and the model was never called
    assert result["status"] == "failed"
    assert "attempt:1 was started 4 times without finishing (limit 3)" in result["reason"]
    assert model.requests == {"full": 0, "slice": 0}
