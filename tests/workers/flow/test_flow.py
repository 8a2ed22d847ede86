"""The whole flow with real worker processes: enqueue -> attempts -> surgical fan-out -> merge -> delivery."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from typing import Any

import pytest

from suture.workers.producer import enqueue
from suture.workers.runtime.app import configure
from suture.workers.store.job_store import get_store
from tests.fixtures.rabbitmq import require_rabbitmq
from tests.fixtures.scripted_model import document
from tests.fixtures.workers import REPO, CeleryStack, WebhookReceiver

pytestmark = pytest.mark.integration


def started(celery_stack: Callable[..., CeleryStack], model_url: str, **env: str) -> CeleryStack:
    stack = celery_stack(model_url, **env)
    configure(stack.settings)
    stack.start_worker(concurrency=20)
    return stack


@pytest.mark.parametrize(
    ("imbalanced", "modes", "calls"),
    [(0, ["full"], {"full": 1, "slice": 0}), (3, ["full", "surgical"], {"full": 1, "slice": 3})],
)
def test_a_job_flows_to_delivery_with_one_slice_per_failing_question(
    celery_stack: Callable[..., CeleryStack],
    scripted_model: Callable[..., Any],
    webhook_receiver: WebhookReceiver,
    imbalanced: int,
    modes: list[str],
    calls: dict[str, int],
) -> None:
    # Given a model whose first quiz has `imbalanced` long correct answers, and a worker
    model = scripted_model(questions=4, imbalanced=imbalanced)
    stack = started(celery_stack, model.base_url)
    # When a job is enqueued with a webhook
    handle = enqueue("quiz", document(4), questions=4, callback=webhook_receiver.url, settings=stack.settings)
    result = handle.result(timeout_s=60)
    # Then it is delivered, surgically repaired if needed, and every slice ran exactly once
    assert (result["status"], result["job_id"]) == ("delivered", handle.id)
    assert result["simulated"] is False  # the scripted model does not declare itself the simulator
    assert [a["mode"] for a in result["attempts"]] == modes
    assert model.requests == calls
    if imbalanced:
        assert result["attempts"][1]["targets"] == [f"/questions/{i}/options" for i in range(imbalanced)]
    assert handle.status() == "delivered"
    assert [a["n"] for a in handle.trace()] == list(range(1, len(modes) + 1))
    _wait_for(lambda: webhook_receiver.received == {handle.id: 1})
    # and the CLI reads the same result and trace
    assert json.loads(run_cli(stack, "result", handle.id, "--timeout", "5"))["attempts"] == result["attempts"]
    assert [a["n"] for a in json.loads(run_cli(stack, "trace", handle.id))] == [
        a["n"] for a in result["attempts"]
    ]


def run_cli(stack: CeleryStack, *args: str) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "suture", *args],
        cwd=REPO,
        env=stack.env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_a_job_that_never_passes_is_soft_delivered_with_its_failures_and_one_sentry_warning(
    celery_stack: Callable[..., CeleryStack], scripted_model: Callable[..., Any], sentry_endpoint: Any
) -> None:
    # Given a model that always leaves one question imbalanced, and the full-regeneration-only policy
    model = scripted_model(questions=4, imbalanced=1)
    stack = started(celery_stack, model.base_url, SENTRY_DSN=sentry_endpoint.dsn)
    handle = enqueue("quiz", document(4), questions=4, policy="full-only", settings=stack.settings)
    # When the chain is exhausted / Then the best output is delivered softly, with its failure
    result = handle.result(timeout_s=60)
    assert result["status"] == "soft_delivered"
    assert result["output"] is not None
    assert [f["code"] for f in result["failures"]] == ["imbalanced_options"]
    assert [a["model"] for a in result["attempts"]] == ["gpt-5-nano", "gpt-5-mini"]
    [event] = sentry_endpoint.wait_for_events(1)
    assert (event["level"], event["message"]) == (
        "warning",
        "Quiz delivered after contract retry exhaustion: imbalanced_options",
    )
    assert event["tags"]["job_id"] == handle.id
    assert document(4) not in json.dumps(event)


def test_the_watchdog_ends_a_job_past_its_deadline(
    celery_stack: Callable[..., CeleryStack], scripted_model: Callable[..., Any]
) -> None:
    # Given a model slower than the job deadline
    model = scripted_model(questions=4, latency_s=4.0)
    stack = started(celery_stack, model.base_url, SUTURE_WORKER__JOB_DEADLINE_S="1")
    # When a job runs past it / Then the watchdog fails it (no output yet) with the reason
    result = enqueue("quiz", document(4), questions=4, settings=stack.settings).result(timeout_s=30)
    assert result["status"] == "failed"
    assert "deadline" in result["reason"]


def test_the_flow_runs_on_rabbitmq_with_the_store_on_redis(
    celery_stack: Callable[..., CeleryStack], scripted_model: Callable[..., Any]
) -> None:
    broker_url = require_rabbitmq()
    model = scripted_model(questions=4, imbalanced=2)
    stack = celery_stack(model.base_url, broker_url=broker_url)
    configure(stack.settings)
    stack.start_worker(concurrency=10)
    handle = enqueue("quiz", document(4), questions=4, settings=stack.settings)
    result = handle.result(timeout_s=60)
    assert result["status"] == "delivered"
    assert get_store(stack.settings).status(handle.id) == "delivered"


def _wait_for(condition: Callable[[], bool], timeout_s: float = 10.0) -> None:
    import time

    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, "condition not met in time"
        time.sleep(0.05)
