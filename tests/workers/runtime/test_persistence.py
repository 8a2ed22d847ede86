"""A worker warns loudly at start-up when the job store's Redis would lose every job in a restart."""

from __future__ import annotations

from collections.abc import Callable

import redis

from suture.workers.runtime.persistence import persistence_problem
from tests.fixtures.redis_server import RedisServer
from tests.fixtures.workers import CeleryStack

WARNING = "THE JOB STORE'S REDIS"


def test_a_redis_with_aof_has_no_problem_and_one_without_says_what_a_restart_loses(
    redis_factory: Callable[..., RedisServer],
) -> None:
    # Given three Redis servers: AOF, RDB snapshots only, nothing
    aof = redis_factory(appendonly=True)
    snapshots = redis_factory(extra=("--save", "3600 1"))
    nothing = redis_factory()
    # When each is asked / Then only the AOF one loses nothing, and the others say what they lose
    problems = [persistence_problem(redis.Redis.from_url(s.url)) for s in (aof, snapshots, nothing)]
    assert problems[0] is None
    assert problems[1] is not None and "only RDB snapshots (save 3600 1)" in problems[1]
    assert problems[2] is not None and "no persistence at all" in problems[2]


def test_a_worker_on_a_redis_without_persistence_warns_once_at_start_up(
    redis_factory: Callable[..., RedisServer], celery_stack: Callable[..., CeleryStack]
) -> None:
    # Given a store on a Redis with neither AOF nor snapshots (a server of its own, even with $REDIS_URL set)
    url = redis_factory().url
    stack = celery_stack(
        "http://127.0.0.1:9/v1", broker_url=url, SUTURE_REDIS_URL=url, SUTURE_RESULT_BACKEND=url
    )
    # When a worker starts / Then its log says so, once, with the way out
    log = stack.start_worker(concurrency=2).log()
    assert log.count(WARNING) == 1
    assert "NO PERSISTENCE AT ALL" in log and "docs/operations.md" in log


def test_the_warning_can_be_silenced(celery_stack: Callable[..., CeleryStack]) -> None:
    stack = celery_stack("http://127.0.0.1:9/v1", SUTURE_STORE__WARN_NO_PERSISTENCE="false")
    assert WARNING not in stack.start_worker(concurrency=2).log()
