"""``suture status`` on a queued job says when no worker is there to run it (the workers' heartbeats)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import pytest

from suture.workers.producer import enqueue
from tests.fixtures.scripted_model import document
from tests.fixtures.workers import CeleryStack

pytestmark = pytest.mark.integration

NOBODY = "no worker has been seen in the last 2 s: nothing is consuming the queue"


def status(stack: CeleryStack, job_id: str) -> tuple[str, str]:
    done = stack.cli("status", job_id)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip(), done.stderr


def test_status_of_a_queued_job_says_whether_any_worker_is_alive(
    celery_stack: Callable[..., CeleryStack], scripted_model: Callable[..., Any]
) -> None:
    # Given a job enqueued where no worker ever ran (workers beat every 0.5 s: silent for 2 s is gone)
    stack = celery_stack(scripted_model(questions=4).base_url, SUTURE_WORKER__WATCHDOG_INTERVAL_S="0.5")
    job = enqueue("quiz", document(4), questions=4, settings=stack.settings).id

    # When its status is asked, Then it is queued, and stderr says nothing consumes the queue
    assert status(stack, job) == (
        "queued",
        f"suture: {NOBODY}; start `suture up`, or `suture worker` with the same broker settings\n",
    )

    # When a worker runs (one that does not take model calls, so the job stays queued)
    worker = stack.start_worker(queues="suture.control")
    # Then the status alone is printed
    assert status(stack, job) == ("queued", "")

    # When that worker has been gone for longer than four heartbeats
    worker.stop()
    time.sleep(2.5)
    # Then the warning is back
    assert NOBODY in status(stack, job)[1]
