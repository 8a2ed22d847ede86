"""A worker told to read ``suture.model`` alone says that bulk jobs will wait for another worker.

Deployments written before the bulk queues existed start model workers with ``-Q suture.model``; bulk
jobs' calls then sit in ``suture.model.bulk`` unread. Real worker processes, their log read.
"""

from __future__ import annotations

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
