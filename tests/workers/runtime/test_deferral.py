"""Budgets and deferral through real processes: simulator (its provider-style meter), Redis, workers.

A call the shared budget cannot hold now is not slept on: its task is published again with a
countdown and the execution ends ``deferred``; the worker thread takes other work meanwhile.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

import httpx2
import pytest

from suture.workers.producer import enqueue
from suture.workers.runtime.app import configure
from suture.workers.simulator.limits import RateLimit
from tests.fixtures.rabbitmq import require_rabbitmq
from tests.fixtures.workers import CeleryStack
from tests.reliability.conftest import varied_document

pytestmark = pytest.mark.integration

NANO, MINI = "gpt-5-nano", "gpt-5-mini"
MINI_ONLY = {"feedback": False, "examples": False, "steps": [{"mode": "full", "model": MINI}]}


def _stats(base_url: str) -> dict[str, Any]:
    return dict(httpx2.get(f"{base_url}/_stats", timeout=10).json())


def _limits(**per_model: dict[str, int]) -> str:
    return json.dumps(per_model)


@pytest.mark.timeout(180)
def test_a_binding_token_limit_is_kept_without_a_429_and_every_job_ends_once(
    celery_stack: Callable[..., CeleryStack], simulator: Callable[..., str]
) -> None:
    # Given a provider metering 16,000 tokens a minute on nano (simulated), and suture told the same;
    # each call reserves its prompt + its 2-question quiz's expected reply (about 1,800 tokens in all),
    # so a dozen jobs need more than the minute's budget
    url = simulator("perfect", limits={NANO: RateLimit(tpm=16_000)})
    stack = celery_stack(
        url, SUTURE_LIMITS=_limits(**{NANO: {"tpm": 16_000}}), SUTURE_CLIENT__MAX_COMPLETION_TOKENS="2000"
    )
    configure(stack.settings)
    worker = stack.start_worker(concurrency=4)
    # When twelve jobs are enqueued at once
    handles = [enqueue("quiz", varied_document(i), questions=2, settings=stack.settings) for i in range(12)]
    results = [h.result(timeout_s=150) for h in handles]
    # Then every job is delivered, one attempt each (nothing lost, nothing twice)...
    assert [r["status"] for r in results] == ["delivered"] * 12
    assert all([a["n"] for a in r["attempts"]] == [1] for r in results)
    # ...calls waited by deferral (no thread asleep), and the provider never had to refuse one
    stats = _stats(url)
    assert " deferred " in worker.log()
    assert stats["rate_limited"] == 0, stats
    assert stats["requests"] == 12
    assert "Traceback" not in worker.log()
    # ...and the worker's log has its own lines, not httpx's line per request (CPU at 1,000 in flight)
    assert "HTTP Request:" not in worker.log()
    # ...and `suture stats` counts the tokens exactly as the provider metered and served them, and the
    # calls deferred for the budget with their wait
    shown = stack.cli("stats")
    assert shown.returncode == 0, shown.stderr
    nano, provider = json.loads(shown.stdout)["models"][NANO], stats["models"][NANO]
    assert (nano["metered_tokens"], nano["served_tokens"]) == (provider["metered_tokens"], provider["tokens"])
    assert nano["served_per_metered"] == round(provider["tokens"] / provider["metered_tokens"], 3)
    assert nano["deferred_for_budget"] >= 1 and nano["deferred_for_budget_s"] > 0
    assert (nano["calls"], nano["rate_limited"]) == (12, 0)


@pytest.mark.timeout(120)
@pytest.mark.parametrize("broker", ["redis", "rabbitmq"])
def test_a_call_waiting_for_its_budget_holds_no_worker_thread(
    celery_stack: Callable[..., CeleryStack], simulator: Callable[..., str], broker: str
) -> None:
    # Given one worker thread, and nano limited to 6 requests a minute (one every 10 s) by suture (the broker
    # Redis, or RabbitMQ: quorum queues, where the countdown waits in the broker's delayed-delivery queues)
    url = simulator("perfect")
    amqp = {"broker_url": require_rabbitmq()} if broker == "rabbitmq" else {}
    stack = celery_stack(url, SUTURE_LIMITS=_limits(**{NANO: {"rpm": 6}}), **amqp)
    configure(stack.settings)
    worker = stack.start_worker(concurrency=1)
    # And nano's budget spent by six jobs, so a seventh must wait about 10 s
    first = [enqueue("quiz", varied_document(i), questions=2, settings=stack.settings) for i in range(6)]
    assert [h.result(timeout_s=30)["status"] for h in first] == ["delivered"] * 6
    waiting = enqueue("quiz", varied_document(6), questions=2, settings=stack.settings)
    deadline = time.monotonic() + 10
    while " deferred " not in worker.log():
        assert time.monotonic() < deadline, "the seventh nano call was never deferred"
        time.sleep(0.05)
    # When a job on mini (not limited) comes in behind it
    started = time.monotonic()
    other = enqueue(
        "quiz",
        varied_document(7),
        questions=2,
        policy="mini-only",
        policy_rules=MINI_ONLY,
        settings=stack.settings,
    )
    # Then the one thread runs it at once, while the nano job still waits for its budget
    assert other.result(timeout_s=8)["status"] == "delivered"
    assert time.monotonic() - started < 5
    assert waiting.status() not in ("delivered", "soft_delivered", "failed")
    # ...and the waiting job is delivered once its budget is back
    assert waiting.result(timeout_s=40)["status"] == "delivered"
    assert _stats(url)["requests"] == 8


@pytest.mark.timeout(120)
def test_deferrals_never_count_toward_the_poison_cap(
    celery_stack: Callable[..., CeleryStack], simulator: Callable[..., str]
) -> None:
    # Given a poison cap that gives a job up after one execution that did not finish, and nano limited
    # to 6 requests a minute (deferrals capped at 6 s by the test's visibility timeout and stall time)
    url = simulator("perfect")
    stack = celery_stack(
        url, SUTURE_LIMITS=_limits(**{NANO: {"rpm": 6}}), SUTURE_WORKER__MAX_REDELIVERIES="0"
    )
    configure(stack.settings)
    worker = stack.start_worker(concurrency=4)
    # When eight jobs come at once: two must wait ~10-20 s, deferred more than once each
    handles = [enqueue("quiz", varied_document(i), questions=2, settings=stack.settings) for i in range(8)]
    results = [h.result(timeout_s=90) for h in handles]
    # Then every job is delivered: no deferral was taken for a lost execution
    assert [r["status"] for r in results] == ["delivered"] * 8
    assert worker.log().count(" deferred ") >= 3
    assert "poison" not in worker.log() and "without finishing" not in worker.log()


@pytest.mark.timeout(150)
def test_a_worker_killed_holding_deferred_calls_loses_none_and_runs_none_twice(
    celery_stack: Callable[..., CeleryStack], simulator: Callable[..., str]
) -> None:
    # Given nano limited to 6 requests a minute, and ten jobs, so four wait for their budget
    url = simulator("perfect")
    stack = celery_stack(url, SUTURE_LIMITS=_limits(**{NANO: {"rpm": 6}}))
    configure(stack.settings)
    worker = stack.start_worker(concurrency=4)
    handles = [enqueue("quiz", varied_document(i), questions=2, settings=stack.settings) for i in range(10)]
    deadline = time.monotonic() + 20
    while worker.log().count(" deferred ") < 4:
        assert time.monotonic() < deadline, "the calls over the budget were never deferred"
        time.sleep(0.05)
    # When the worker holding the deferred messages is SIGKILLed and another one starts
    worker.kill()
    stack.start_worker(concurrency=4)
    # Then every job is delivered once, with one attempt (its deferred message came back, once applied)
    results = [h.result(timeout_s=120) for h in handles]
    assert [r["status"] for r in results] == ["delivered"] * 10
    assert all([a["n"] for a in r["attempts"]] == [1] for r in results)
    assert len({r["job_id"] for r in results}) == 10
