"""A worker whose broker and store address turns into a replica (a failover at a fixed address, as a
managed Redis's endpoint sees it) does not exit on ``READONLY``: it reconnects until the address is a
primary again."""

from __future__ import annotations

import time
from collections.abc import Callable

import pytest
import redis

from suture.workers.producer import enqueue
from suture.workers.runtime.app import configure
from tests.fixtures.redis_server import RedisServer
from tests.fixtures.workers import CeleryStack
from tests.reliability.conftest import varied_document


@pytest.mark.timeout(180)
def test_a_worker_lives_through_its_redis_being_demoted_and_promoted_again(
    redis_factory: Callable[..., RedisServer],
    celery_stack: Callable[..., CeleryStack],
    simulator: Callable[..., str],
) -> None:
    # Given a worker on one Redis (broker and store), and another Redis to replicate from
    server, other = redis_factory(), redis_factory()
    urls = {"SUTURE_REDIS_URL": server.url, "SUTURE_RESULT_BACKEND": server.url}
    stack = celery_stack(simulator("perfect"), broker_url=server.url, **urls)
    configure(stack.settings)
    worker = stack.start_worker(concurrency=4)
    admin = redis.Redis.from_url(server.url)
    # When that Redis becomes a replica for a while (every write READONLY), then a primary again
    admin.replicaof("127.0.0.1", other.port)
    time.sleep(8)
    admin.replicaof("no", "one")
    # Then the worker is still there and runs new jobs
    assert worker.process.poll() is None, worker.log()[-3000:]
    handle = enqueue("quiz", varied_document(3), questions=3, settings=stack.settings)
    assert handle.result(timeout_s=60)["status"] == "delivered"
    assert worker.process.poll() is None
    admin.close()
