"""``suture stats``: waiting messages per queue and unfinished jobs, read from a real broker and store."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

import pytest

from suture.workers.producer import enqueue
from suture.workers.runtime.app import configure
from tests.fixtures.redis_server import free_port
from tests.fixtures.scripted_model import document
from tests.fixtures.workers import CeleryStack

pytestmark = pytest.mark.integration


def stats(stack: CeleryStack, **env: str) -> tuple[int, Any, str]:
    done = stack.cli("stats", **env)
    return done.returncode, json.loads(done.stdout) if done.stdout else None, done.stderr


def test_stats_count_queued_jobs_then_nothing_once_workers_delivered_them(
    celery_stack: Callable[..., CeleryStack], scripted_model: Callable[..., Any]
) -> None:
    # Given three jobs enqueued while no worker runs
    model = scripted_model(questions=4)
    stack = celery_stack(model.base_url)
    configure(stack.settings)
    handles = [enqueue("quiz", document(4), questions=4, settings=stack.settings) for _ in range(3)]
    # When stats are read / Then three jobs wait for the dispatcher (in no queue yet), three are unfinished
    code, figures, _ = stats(stack)
    assert code == 0
    assert figures == {
        "jobs": {"unfinished": 3, "past_deadline": 0, "waiting": {"interactive": 3, "bulk": 0}},
        "models": {},  # no model has limits: nothing metered
        "queues": {
            "suture.model": 0,
            "suture.model.bulk.ahead": 0,
            "suture.model.bulk": 0,
            "suture.control": 0,
        },
    }
    # And once a worker delivered them, nothing waits and nothing is unfinished
    stack.start_worker(concurrency=4)
    assert all(h.result(timeout_s=60)["status"] == "delivered" for h in handles)
    deadline = time.monotonic() + 10
    while (figures := stats(stack)[1])["queues"]["suture.model"] and time.monotonic() < deadline:
        time.sleep(0.1)
    assert figures == {
        "jobs": {"unfinished": 0, "past_deadline": 0, "waiting": {"interactive": 0, "bulk": 0}},
        "models": {},  # no model has limits: nothing metered
        "queues": {
            "suture.model": 0,
            "suture.model.bulk.ahead": 0,
            "suture.model.bulk": 0,
            "suture.control": 0,
        },
    }


def test_stats_with_the_broker_unreachable_still_show_the_jobs_and_never_the_password(
    celery_stack: Callable[..., CeleryStack], scripted_model: Callable[..., Any]
) -> None:
    # Given one queued job, and a broker URL (with a password) where nothing listens
    stack = celery_stack(scripted_model(questions=4).base_url)
    configure(stack.settings)
    enqueue("quiz", document(4), questions=4, settings=stack.settings)
    dead = f"redis://:hunter2-secret@127.0.0.1:{free_port()}/0"
    # When stats are read / Then the job counts print, the queues are null, exit 1, no password anywhere
    code, figures, stderr = stats(stack, SUTURE_BROKER_URL=dead)
    assert code == 1
    assert (
        figures["jobs"] == {"unfinished": 1, "past_deadline": 0, "waiting": {"interactive": 1, "bulk": 0}}
        and figures["queues"] is None
    )
    assert stderr == "suture: broker unreachable (OperationalError)\n"
    assert "hunter2" not in json.dumps(figures) + stderr


def test_stats_with_the_store_unreachable_is_one_line_exit_2(
    celery_stack: Callable[..., CeleryStack], scripted_model: Callable[..., Any]
) -> None:
    stack = celery_stack(scripted_model(questions=4).base_url)
    code, figures, stderr = stats(
        stack, SUTURE_REDIS_URL=f"redis://:hunter2-secret@127.0.0.1:{free_port()}/0"
    )
    assert code == 2 and figures is None
    assert stderr.count("\n") == 1 and "Traceback" not in stderr and "hunter2" not in stderr
