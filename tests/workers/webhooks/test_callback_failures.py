"""A callback that cannot be delivered is never silent: the job's status says so, Sentry and the metrics
too, and a callback the workers would refuse is refused at enqueue instead of dropped at delivery."""

from __future__ import annotations

import itertools
import json
import time
import urllib.request
from collections.abc import Callable
from typing import Any

import pytest

from suture.workers.errors import InvalidJob
from suture.workers.producer import enqueue
from suture.workers.store.job_store import get_store
from suture.workers.webhooks import target_rules
from tests.fixtures.api_server import ApiServer
from tests.fixtures.receivers import RecordingReceiver
from tests.fixtures.redis_server import free_port
from tests.fixtures.scripted_model import document
from tests.fixtures.sentry_endpoint import SentryEndpoint
from tests.fixtures.workers import CeleryStack, wait_for

pytestmark = pytest.mark.integration


def test_a_callback_answered_500_ends_failed_in_the_status_with_a_sentry_event_and_a_metric(
    celery_stack: Callable[..., CeleryStack],
    scripted_model: Callable[..., Any],
    recording_receiver: Callable[..., RecordingReceiver],
    api_server: Callable[..., ApiServer],
    sentry_endpoint: SentryEndpoint,
) -> None:
    # Given a worker (3 attempts, gaps doubling from 0.3 s) reporting to Sentry and serving metrics,
    # `suture serve` beside it, and a receiver that always answers 500
    model = scripted_model(questions=2)
    metrics_port = free_port()
    stack = celery_stack(
        model.base_url,
        SUTURE_SENTRY_DSN=sentry_endpoint.dsn,
        SUTURE_WEBHOOK__MAX_ATTEMPTS="3",
        SUTURE_WEBHOOK__BACKOFF_BASE_S="0.3",
    )
    worker = stack.start_worker(concurrency=8, env={"SUTURE_WORKER__METRICS_PORT": str(metrics_port)})
    server = api_server(stack)
    receiver = recording_receiver(status=500)
    # And before any callback, the given-up counter already reads 0 (an alert sees the first one)
    assert 'suture_callbacks_given_up_total{reason="attempts"} 0.0' in _scrape(metrics_port)

    # When a job with that callback is enqueued over HTTP
    answer = server.call(
        "POST", "/v1/jobs", json={"input": document(2), "questions": 2, "callback": receiver.url}
    )
    assert answer.status_code == 202, answer.text
    job_id = answer.json()["job_id"]

    # Then its status over HTTP says the callback failed, after 3 attempts, the last answered 500
    def callback() -> dict[str, Any] | None:
        view = server.call("GET", f"/v1/jobs/{job_id}").json()
        assert view["status"] == "delivered" or view["result"] is None
        return view["callback"]

    wait_for(lambda: (callback() or {}).get("state") == "failed", timeout_s=30)
    assert callback() == {"state": "failed", "attempts": 3, "last_status": 500, "last_error": None}
    # ...as the CLI and the Python API say it
    shown = stack.cli("status", job_id, "--json")
    assert json.loads(shown.stdout)["callback"]["state"] == "failed", shown.stderr
    assert "callback: failed after 3 attempts (last: HTTP 500)" in stack.cli("status", job_id).stderr
    # And the gaps between attempts double from the base (not the watchdog's 2 s sweep)
    times = [post.received_s for post in receiver.received()]
    gaps = [b - a for a, b in itertools.pairwise(times)]
    assert len(times) == 3 and 0.2 < gaps[0] < 1.2 and gaps[0] < gaps[1] < 2.0, gaps

    # And one Sentry event of its own group names the receiver's host and the last status, and no body
    wait_for(lambda: any("Callback given up" in str(e.get("message")) for e in sentry_endpoint.events()))
    [event] = [e for e in sentry_endpoint.events() if "Callback given up" in str(e.get("message"))]
    assert event["fingerprint"] == ["suture", "callback_given_up", "127.0.0.1"]
    assert event["tags"]["receiver_host"] == "127.0.0.1" and event["tags"]["last_status"] == "500"
    assert "/hook" not in json.dumps(event) and '"questions"' not in json.dumps(event)
    # And the counter moved to 1; And the worker ended a task in failure for Flower's Failed tab
    assert 'suture_callbacks_given_up_total{reason="attempts"} 1.0' in _scrape(metrics_port)
    wait_for(lambda: "suture.callback_given_up" in worker.log() and "CallbackGivenUp" in worker.log())

    # And the workers announce the rules they judge callbacks by, for producers to check at enqueue
    assert get_store(stack.settings).outbox.workers_rules() == target_rules(stack.settings.webhook)


def test_a_callback_the_workers_would_refuse_is_refused_at_enqueue_naming_the_setting(
    celery_stack: Callable[..., CeleryStack], scripted_model: Callable[..., Any]
) -> None:
    # Given workers that announced they call https only, and a producer configured to allow http
    stack = celery_stack(scripted_model(questions=2).base_url)
    store = get_store(stack.settings)
    theirs = target_rules(stack.settings.webhook) | {"require_https": True}
    store.outbox.announce(theirs, ttl_s=60)

    # When an http callback is enqueued
    with pytest.raises(InvalidJob) as refused:
        enqueue("quiz", document(2), questions=2, callback="http://127.0.0.1:9/hook", settings=stack.settings)

    # Then it is refused now, on the callback field, saying which setting of the workers differs
    assert refused.value.field == "callback"
    assert "the workers would refuse it" in str(refused.value) and "require_https=True" in str(refused.value)
    # And nothing was stored; once the workers' rules agree, the same callback is taken
    store.outbox.announce(target_rules(stack.settings.webhook), ttl_s=60)
    handle = enqueue(
        "quiz", document(2), questions=2, callback="http://127.0.0.1:9/hook", settings=stack.settings
    )
    assert handle.status() == "queued"


def _scrape(port: int) -> str:
    deadline = time.monotonic() + 10
    while True:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as response:
                return response.read().decode()
        except OSError:
            assert time.monotonic() < deadline, "no metrics endpoint"
            time.sleep(0.1)
