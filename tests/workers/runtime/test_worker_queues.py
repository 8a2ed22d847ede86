"""A worker told to read ``suture.model`` alone says that bulk jobs will wait for another worker.

Deployments written before the bulk queues existed start model workers with ``-Q suture.model``; bulk
jobs' calls then sit in ``suture.model.bulk`` unread. Real worker processes, their log read.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import pytest

from suture.workers.runtime.app import ALL_QUEUES
from tests.fixtures.workers import CeleryStack

pytestmark = pytest.mark.integration

WARNING = "bulk jobs wait for a worker that reads them"


def test_a_worker_reading_only_the_interactive_model_queue_warns_that_bulk_jobs_wait(
    celery_stack: Callable[..., CeleryStack], scripted_model: Any
) -> None:
    stack = celery_stack(scripted_model().base_url)
    # When a worker starts with the queue list of an older deployment
    worker = stack.start_worker(concurrency=2, queues="suture.model,suture.control")
    # Then its log names the bulk queues it does not read
    assert WARNING in worker.log()
    assert "suture.model.bulk.ahead, suture.model.bulk" in worker.log()


def test_a_worker_reading_every_queue_or_only_control_does_not_warn(
    celery_stack: Callable[..., CeleryStack], scripted_model: Any
) -> None:
    stack = celery_stack(scripted_model().base_url)
    every = stack.start_worker(concurrency=2, queues=",".join(ALL_QUEUES))
    control = stack.start_worker(concurrency=2, queues="suture.control")
    assert WARNING not in every.log() and WARNING not in control.log()


def test_a_model_worker_reports_its_bulk_slots_with_its_heartbeat_and_a_control_worker_none(
    celery_stack: Callable[..., CeleryStack], scripted_model: Any
) -> None:
    from suture.workers.store.job_store import get_store

    stack = celery_stack(scripted_model().base_url)
    store = get_store(stack.settings)
    # Given a model worker of 10 slots (one kept free of bulk calls) and a control worker
    stack.start_worker(concurrency=10, queues=",".join(ALL_QUEUES))
    stack.start_worker(concurrency=4, queues="suture.control")
    # When both have beaten / Then the dispatcher reads 9 bulk slots: the model worker's, not the control
    # one's
    deadline = time.monotonic() + 20
    while len(store.redis.zrange(f"{store.prefix}:workers", 0, -1)) < 2 and time.monotonic() < deadline:
        time.sleep(0.1)
    assert store.watchlist.model_slots(time.time(), silent_s=60) == 9
