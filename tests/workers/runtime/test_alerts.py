"""Sentry alerts from real workers (the real SDK, sending to a local envelope sink) an operator can act on.

Every document here carries a canary: no envelope may ever contain it, whatever path the job took.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

import pytest

from suture.workers.producer import enqueue
from suture.workers.runtime.app import configure
from suture.workers.store.job_store import get_store
from tests.fixtures.scripted_model import quiz
from tests.fixtures.sentry_endpoint import SentryEndpoint
from tests.fixtures.simulator import Scripted, ScriptedServer, completion_body
from tests.fixtures.workers import CeleryStack, wait_for
from tests.workers.runtime.corrupt import CANARY, DOCUMENT, corrupt_job

pytestmark = pytest.mark.integration

SOURCE = {"file": "course/biology.md", "section": 3, "title": "Photosynthesis", "pages": None}


def no_canary(endpoint: SentryEndpoint) -> None:
    for body in endpoint.raw_bodies():
        assert CANARY.encode() not in body
        assert CANARY[:20].encode() not in body


def test_a_soft_delivery_alert_names_the_failures_reason_policy_source_and_the_fix(
    celery_stack: Callable[..., CeleryStack],
    scripted_model: Callable[..., Any],
    sentry_endpoint: SentryEndpoint,
) -> None:
    # Given a worker with SENTRY_DSN set (tracing every job) and a model that always leaves one question
    # imbalanced
    model = scripted_model(questions=4, imbalanced=1)
    stack = celery_stack(
        model.base_url, SENTRY_DSN=sentry_endpoint.dsn, SUTURE_SENTRY__TRACES_SAMPLE_RATE="1"
    )
    stack.start_worker(concurrency=4)
    settings = stack.settings.model_copy(update={"sentry_dsn": None})  # the producer side stays quiet here
    # When a batch's job (its source named) runs out of full-regeneration retries
    handle = enqueue(
        "quiz",
        DOCUMENT,
        questions=4,
        policy="full-only",
        batch="b-42",
        meta={"source": SOURCE},
        settings=settings,
    )
    result = handle.result(timeout_s=60)

    # Then it is soft-delivered and exactly one warning arrives for it
    assert (result["status"], result["cause"]) == ("soft_delivered", "exhausted")
    [event] = sentry_endpoint.wait_for_events(1, timeout_s=15)
    assert event["level"] == "warning"
    assert event["message"] == "Quiz delivered after contract retry exhaustion: imbalanced_options"
    assert event["fingerprint"] == ["suture", "soft_delivered", "quiz", "imbalanced_options"]
    assert (event["tags"]["job_id"], event["tags"]["policy"], event["tags"]["batch"]) == (
        handle.id,
        "full-only",
        "b-42",
    )
    # ...with the remaining failures' pointers, the reason, policy and source, and the commands to fix it
    remaining = event["contexts"]["remaining_failures"]
    assert remaining["count"] == 1
    assert [(f["pointer"], f["code"]) for f in remaining["shown"]] == [
        ("/questions/0/options", "imbalanced_options")
    ]
    assert (
        "max_attempts" in event["contexts"]["job"]["reason"]
        or "every step" in event["contexts"]["job"]["reason"]
    )
    assert event["contexts"]["job"]["policy"] == "full-only"
    assert event["contexts"]["origin"] == {
        "file": "course/biology.md",
        "section": 3,
        "title": "Photosynthesis",
        "batch": "b-42",
    }
    assert event["contexts"]["review"]["fix"].startswith(f"suture resume {handle.id} --feedback")
    assert event["contexts"]["attempt_summary"]["attempts"] == 2
    # ...and the job is one trace across its tasks (both attempts)
    sentry_endpoint.wait_for(lambda e: len(e.transactions()) >= 2)
    attempts = [t for t in sentry_endpoint.transactions() if t["transaction"] == "suture.attempt"]
    assert len(attempts) == 2
    assert len({t["contexts"]["trace"]["trace_id"] for t in attempts}) == 1
    no_canary(sentry_endpoint)


def test_a_401_and_a_deadline_land_in_different_groups_each_with_its_cause(
    celery_stack: Callable[..., CeleryStack],
    scripted_server: Callable[[list[Scripted]], ScriptedServer],
    sentry_endpoint: SentryEndpoint,
) -> None:
    # Given a provider that answers 401 once, then takes 4 s for a valid quiz; jobs have a 2 s deadline
    unauthorized = {"error": {"message": "Incorrect API key provided", "type": "invalid_request_error"}}
    valid = completion_body(json.dumps(quiz(4, 0)), model="gpt-5-nano")
    server = scripted_server([Scripted(status=401, body=unauthorized), Scripted(body=valid, delay_s=4.0)])
    stack = celery_stack(server.base_url, SENTRY_DSN=sentry_endpoint.dsn, SUTURE_WORKER__JOB_DEADLINE_S="2")
    stack.start_worker(concurrency=4)
    settings = stack.settings.model_copy(update={"sentry_dsn": None})

    # When one job meets the 401 and the next one its deadline
    auth = enqueue("quiz", DOCUMENT, questions=4, settings=settings).result(timeout_s=30)
    late = enqueue("quiz", DOCUMENT, questions=4, settings=settings)
    deadline = late.result(timeout_s=30)

    # Then each failed for its own cause, the deadline's reason with the job's real deadline and the call cut
    # short
    assert (auth["status"], auth["cause"]) == ("failed", "auth")
    assert (deadline["status"], deadline["cause"]) == ("failed", "deadline")
    assert deadline["reason"] == "deadline of 2 s passed while attempt:1 was still running"
    # ...and two error events in two groups, each titled with its cause
    events = sentry_endpoint.wait_for_events(2, timeout_s=15)
    assert sorted((e["message"], tuple(e["fingerprint"]), e["tags"]["cause"]) for e in events) == [
        ("Quiz job failed: auth", ("suture", "failed", "quiz", "auth"), "auth"),
        ("Quiz job failed: deadline", ("suture", "failed", "quiz", "deadline"), "deadline"),
    ]
    # And when the call cut short comes back, the failed job counts it (attempt, tokens, cost)
    store = get_store(stack.settings)
    wait_for(lambda: bool((store.result(late.id) or {}).get("attempts")), timeout_s=15)
    counted = store.result(late.id)
    assert counted is not None
    assert [(a["n"], a["late"]) for a in counted["attempts"]] == [(1, True)]
    assert counted["cost_usd"] > 0 and counted["usage"]["output_tokens"] == 50
    no_canary(sentry_endpoint)


def test_a_forced_internal_error_gives_one_error_event_with_its_traceback_and_no_document_text(
    celery_stack: Callable[..., CeleryStack],
    scripted_model: Callable[..., Any],
    sentry_endpoint: SentryEndpoint,
) -> None:
    # Given a worker, and a job whose stored state is corrupt, quoting its document where a number belongs
    model = scripted_model(questions=4)
    stack = celery_stack(model.base_url, SENTRY_DSN=sentry_endpoint.dsn)
    stack.start_worker(concurrency=4)
    job_id = corrupt_job(stack.settings)

    # When its attempt runs
    configure(stack.settings).send_task("suture.attempt", args=[job_id, 1], queue="suture.model")
    result = get_store(stack.settings).wait_result(job_id, timeout_s=30)

    # Then the job is given up for an internal error, its reason free of the document
    assert result is not None
    assert (result["status"], result["cause"]) == ("failed", "internal")
    assert result["reason"].startswith("internal error in suture.attempt: ValidationError:")
    assert CANARY[:16] not in result["reason"]
    # ...and exactly one event arrives: an error with the job id and the traceback, nothing else
    sentry_endpoint.wait_for_events(2, timeout_s=5)
    [event] = sentry_endpoint.events()
    assert event["level"] == "error"
    assert (event["tags"]["job_id"], event["tags"]["cause"]) == (job_id, "internal")
    [exception] = event["exception"]["values"]
    assert exception["type"] == "ValidationError"
    assert exception["stacktrace"]["frames"]
    assert "input_value=[Filtered]" in exception["value"]
    no_canary(sentry_endpoint)


def test_a_sigkilled_worker_gives_one_warning_and_the_watchdog_checks_in_once_per_interval(
    celery_stack: Callable[..., CeleryStack],
    scripted_model: Callable[..., Any],
    sentry_endpoint: SentryEndpoint,
) -> None:
    # Given two workers with Sentry, a watchdog every 2 s, and a slow model
    model = scripted_model(questions=4, latency_s=3.0)
    stack = celery_stack(model.base_url, SENTRY_DSN=sentry_endpoint.dsn)
    stack.start_worker(concurrency=4)
    stack.start_worker(concurrency=4)
    since_s = time.monotonic()
    settings = stack.settings.model_copy(update={"sentry_dsn": None})
    # When a worker is SIGKILLed while a job's model call is in flight on it
    handle = enqueue("quiz", DOCUMENT, questions=4, settings=settings)
    wait_for(lambda: model.in_flight["now"] == 1)
    busy = next(worker for worker in stack.workers if "suture.attempt" in worker.log())
    busy.kill()
    # Then the job is redone on the other worker and delivered
    assert handle.result(timeout_s=60)["status"] == "delivered"
    # ...and exactly one warning says so, with the job id and what was redone
    sentry_endpoint.wait_for_events(2, timeout_s=5)
    [event] = sentry_endpoint.events()
    assert (event["level"], event["message"]) == ("warning", "Quiz job redone after a worker was lost")
    assert (event["tags"]["job_id"], event["tags"]["redone"]) == (handle.id, "worker_lost")
    assert event["contexts"]["redone"]["what"].startswith("attempt:1 ran again")
    # And the watchdog kept checking in as a cron monitor: in progress, then ok, at most once per interval
    elapsed_s = time.monotonic() - since_s
    check_ins = sentry_endpoint.check_ins(since_s)
    started = [c for c in check_ins if c["status"] == "in_progress"]
    finished = {c["check_in_id"]: c for c in check_ins if c["status"] == "ok"}
    assert len(started) >= 3
    assert len(started) <= elapsed_s / 2 + 2  # one sweep per 2 s interval in the cluster, not one per worker
    assert {c["monitor_slug"] for c in check_ins} == {"suture-watchdog"}
    assert started[0]["monitor_config"]["schedule"] == {"type": "interval", "value": 1, "unit": "minute"}
    # (a sweep in flight at the end, or on the killed worker, has no "ok" yet)
    assert sum(c["check_in_id"] in finished for c in started) >= len(started) - 2
    no_canary(sentry_endpoint)
