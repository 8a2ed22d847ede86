"""The watchdog's stall nudges: only while the queues are drained, and backed off per job."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator

import pytest
import redis

from suture.config.settings import load_settings
from suture.workers.runtime.app import MODEL_QUEUES, app, configure
from suture.workers.runtime.dispatcher import CeleryDispatcher
from tests.fixtures.inline_flow import RecordingObserver, ScriptedCaller, drain, inline_flow, new_job
from tests.fixtures.rabbitmq import require_rabbitmq

STALL_S = 600.0


@pytest.fixture
def client(redis_url: str) -> redis.Redis:
    return redis.Redis.from_url(redis_url, decode_responses=True)


def test_no_nudges_while_messages_wait_then_the_stalled_job_is_sent_once_they_are_through(
    client: redis.Redis,
) -> None:
    # Given a job with no task opened for longer than stall_s, behind 3 messages not yet taken
    flow, dispatcher = inline_flow(client, ScriptedCaller())
    stalled = new_job(flow)
    backlog = [new_job(flow) for _ in range(3)]
    for job_id in backlog:
        dispatcher.attempt(job_id, 1)
    later_s = time.time() + STALL_S + 1
    # When the watchdog runs with the backlog still queued
    flow.watchdog(now_s=later_s)
    # Then it re-sends nothing (the stalled job's message is most likely in the backlog too)
    assert [args[0] for _, args in dispatcher.sent] == backlog
    # When the backlog has run and the watchdog runs again
    assert drain(flow, dispatcher) == ["delivered"] * 3
    flow.watchdog(now_s=later_s)
    # Then only the job that is still without progress is re-sent, and it runs to delivery
    assert dispatcher.sent == [("attempt", (stalled, 1))]
    assert drain(flow, dispatcher) == ["delivered"]
    assert flow.store.status(stalled) == "delivered"


def test_repeated_nudges_of_one_job_back_off_exponentially(client: redis.Redis) -> None:
    # Given a job whose re-sent messages keep getting lost (nothing ever runs them)
    flow, dispatcher = inline_flow(client, ScriptedCaller(), stall_s=STALL_S)
    job_id = new_job(flow)
    start_s = time.time()

    def nudged_at(offset_s: float) -> bool:
        dispatcher.sent.clear()  # lost: the queue is empty again
        flow.watchdog(now_s=start_s + offset_s)
        return dispatcher.sent == [("attempt", (job_id, 1))]

    # When the watchdog runs every so often, Then the waits before nudges double: 1, 2, 4 x stall_s
    assert nudged_at(STALL_S + 1)
    assert not nudged_at(3 * STALL_S)
    assert nudged_at(3 * STALL_S + 2)
    assert not nudged_at(7 * STALL_S)
    assert nudged_at(7 * STALL_S + 3)
    assert int(client.hget(f"{flow.store.prefix}:job:{job_id}", "nudges") or 0) == 3


def test_a_stalled_job_is_reported_redone_once_however_often_it_is_nudged(client: redis.Redis) -> None:
    # Given a job whose re-sent messages keep getting lost, and an observer (Sentry, in a worker)
    flow, dispatcher = inline_flow(client, ScriptedCaller(), stall_s=STALL_S)
    flow.observer = observer = RecordingObserver()
    job_id = new_job(flow)
    start_s = time.time()
    # When the watchdog nudges it three times
    for offset_s in (STALL_S + 1, 3 * STALL_S + 2, 7 * STALL_S + 3):
        dispatcher.sent.clear()
        flow.watchdog(now_s=start_s + offset_s)
    # Then one notice says what was redone, for that job
    assert observer.kinds("redone") == [
        (job_id, "stalled: the watchdog found no progress for 600 s; re-sent its next step (attempt 1, full)")
    ]


def test_a_job_that_expired_gets_no_nudge_record(client: redis.Redis) -> None:
    # Given a job id whose record is gone from Redis
    flow, _ = inline_flow(client, ScriptedCaller())
    job_id = uuid.uuid4().hex
    # When a nudge is counted for it, Then nothing is written and 0 comes back
    assert flow.store.watchlist.nudged(job_id, time.time(), STALL_S) == 0
    assert not client.exists(f"{flow.store.prefix}:job:{job_id}")


@pytest.fixture(params=["redis", "amqp"])
def celery_on(request: pytest.FixtureRequest, redis_url: str) -> Iterator[CeleryDispatcher]:
    broker = redis_url if request.param == "redis" else require_rabbitmq()
    settings = load_settings(overrides={"broker_url": broker, "redis_url": redis_url})
    configure(settings)
    dispatcher = CeleryDispatcher(settings)
    dispatcher.waiting()  # declares the queues, as a worker would
    purge()
    yield dispatcher
    purge()
    configure(load_settings(overrides={"broker_url": redis_url, "redis_url": redis_url}))  # the next test's


def purge() -> None:
    with app.connection_for_write() as connection:
        for queue in MODEL_QUEUES:
            connection.default_channel.queue_purge(queue)


def test_the_celery_dispatcher_counts_messages_waiting_in_the_broker(celery_on: CeleryDispatcher) -> None:
    # Given a real broker (Redis or RabbitMQ) with no worker consuming
    before = celery_on.waiting()
    # When an interactive job's attempt and a bulk job's are published (to their classes' queues)
    celery_on.attempt("job-a", 1, "interactive", None)
    celery_on.attempt("job-b", 1, "bulk", "t")
    # Then both are counted as waiting
    assert before is not None and celery_on.waiting() == before + 2


def test_the_celery_dispatcher_cannot_count_on_an_unreachable_broker(redis_url: str) -> None:
    # Given a broker on a closed port, When the watchdog asks, Then it gets None (and does not nudge)
    settings = load_settings(
        overrides={"broker_url": "redis://127.0.0.1:1/0", "redis_url": "redis://127.0.0.1:1/0"}
    )
    configure(settings)
    try:
        assert CeleryDispatcher(settings).waiting() is None
    finally:
        configure(load_settings(overrides={"broker_url": redis_url, "redis_url": redis_url}))
