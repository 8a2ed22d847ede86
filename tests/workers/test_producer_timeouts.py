"""Producers are told the truth: an enqueue whose write reached Redis but whose reply was lost either
returns the job it made (read back under its idempotency key) or raises ``EnqueueOutcomeUnknown`` with the
job id and the key, and enqueueing again with that key never makes a second job.

A real redis-server, and a proxy in front of it that forwards every request and drops the replies.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator

import pytest
import redis

import suture
from suture.config.settings import Settings, load_settings
from suture.workers.errors import EnqueueOutcomeUnknown
from suture.workers.producer import enqueue
from tests.fixtures.redis_proxy import ReplyDroppingProxy, reply_dropping_proxy
from tests.fixtures.redis_server import RedisServer

DOCUMENT = "Mitochondria make ATP. Ribosomes make proteins. Chloroplasts capture light."


@pytest.fixture
def server(redis_factory: Callable[..., RedisServer]) -> RedisServer:
    return redis_factory()


@pytest.fixture
def proxy(server: RedisServer) -> Iterator[ReplyDroppingProxy]:
    with reply_dropping_proxy(server.port) as proxy:
        yield proxy


def _settings(server: RedisServer, proxy: ReplyDroppingProxy) -> Settings:
    # The store through the proxy, its commands timing out after 1 s; the broker (unused while the
    # dispatcher sends jobs) directly.
    overrides = {"redis_url": proxy.url, "broker_url": server.url, "worker": {"redis_timeout_s": 1.0}}
    return load_settings(overrides=overrides)


def _jobs(server: RedisServer) -> list[str]:
    client = redis.Redis.from_url(server.url, decode_responses=True)
    return sorted(key for key in client.scan_iter("suture:job:*") if key.count(":") == 2)


def test_a_lost_reply_with_the_store_back_returns_the_job_that_was_made(
    server: RedisServer, proxy: ReplyDroppingProxy
) -> None:
    # Given a producer whose store connection answers (one job enqueued, its scripts loaded)
    settings = _settings(server, proxy)
    enqueue("quiz", DOCUMENT, questions=2, settings=settings)
    before = _jobs(server)

    # When the next reply is dropped (the write goes through), and the link heals right after
    proxy.dropping.set()

    def heal_after_a_drop() -> None:
        while proxy.dropped_bytes == 0:
            time.sleep(0.01)
        proxy.dropping.clear()

    healer = threading.Thread(target=heal_after_a_drop, daemon=True)
    healer.start()
    handle = enqueue("quiz", DOCUMENT, questions=2, idempotency_key="order-1", settings=settings)
    healer.join(5)

    # Then the caller gets the one job its write made, and a retry under its key gets the same one
    [made] = sorted(set(_jobs(server)) - set(before))
    assert made == f"suture:job:{handle.id}"
    again = enqueue("quiz", DOCUMENT, questions=2, idempotency_key="order-1", settings=settings)
    assert again.id == handle.id
    assert len(_jobs(server)) == len(before) + 1
    print(f"\nlost reply, store back: dropped {proxy.dropped_bytes} bytes; 1 job made, retry -> same job")


def test_a_lost_reply_with_the_store_still_silent_says_outcome_unknown_and_a_retry_makes_no_second_job(
    server: RedisServer, proxy: ReplyDroppingProxy
) -> None:
    # Given a producer whose store connection answers, and a caller that gives no idempotency key
    settings = _settings(server, proxy)
    enqueue("quiz", DOCUMENT, questions=2, settings=settings)
    before = _jobs(server)

    # When every reply is dropped (requests still reach Redis) during the enqueue
    proxy.dropping.set()
    started = time.monotonic()
    with pytest.raises(EnqueueOutcomeUnknown) as raised:
        enqueue("quiz", DOCUMENT, questions=2, settings=settings)
    waited_s = time.monotonic() - started
    proxy.dropping.clear()

    # Then the error says the outcome is unknown and carries the job id and the automatic key
    error = raised.value
    assert "outcome unknown" in str(error) and error.job_id in str(error)
    assert error.idempotency_key.startswith("auto-") and error.idempotency_key in str(error)
    assert (
        isinstance(error, suture.StoreUnavailable) and suture.EnqueueOutcomeUnknown is EnqueueOutcomeUnknown
    )
    # (the write did land: the job exists though its producer could not learn it)
    assert _jobs(server) == sorted([*before, f"suture:job:{error.job_id}"])

    # And enqueueing again with the error's key returns that job, and makes no second one
    again = enqueue("quiz", DOCUMENT, questions=2, idempotency_key=error.idempotency_key, settings=settings)
    assert again.id == error.job_id
    assert len(_jobs(server)) == len(before) + 1
    print(
        f"\nlost replies, store silent: outcome unknown after {waited_s:.1f} s; retry -> same job, 1 job made"
    )
