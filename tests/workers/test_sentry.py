"""Sentry events of finished jobs, sent by the real sentry-sdk to a local envelope endpoint."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
import sentry_sdk

from config.settings import Settings
from tests.fixtures.sentry_endpoint import PUBLIC_KEY, SentryEndpoint
from workers.sentry import init_sentry, report_final

API_KEY = "sk-test-SECRET-api-key-123"
REDIS_PASSWORD = "redis-SECRET-pw"
DOCUMENT = "Photosynthesis converts light energy into chemical energy in chloroplasts."
OUTPUT_TEXT = "Which organelle hosts photosynthesis?"


def make_result(status: str, codes: tuple[str, ...] = ("imbalanced_options",)) -> dict[str, Any]:
    """A job result in the pinned schema, with document/output text that must never reach Sentry."""
    failures = [
        {"kind": "rule", "pointer": f"/questions/{i}/options", "code": code, "message": f"{OUTPUT_TEXT} bad"}
        for i, code in enumerate(codes)
    ]
    attempt = {
        "usage": {"input_tokens": 1000, "output_tokens": 500, "reasoning_tokens": 0},
        "cost_usd": 0.0002,
        "latency_ms": 1500,
        "transport_retries": 1,
        "rolled_back": [],
        "failures": failures,
        "patch": [{"op": "replace", "path": "/questions/0/question", "value": OUTPUT_TEXT}],
    }
    return {
        "job_id": "job-123",
        "status": status,
        "reason": "retries exhausted",
        "output": {"questions": [{"question": OUTPUT_TEXT, "source_quote": DOCUMENT}]},
        "input": DOCUMENT,
        "failures": failures,
        "attempts": [
            {**attempt, "n": 1, "step": 0, "mode": "full", "model": "gpt-5-nano", "targets": []},
            {**attempt, "n": 2, "step": 1, "mode": "surgical", "model": "gpt-5-nano", "targets": ["/q/0"]},
            {**attempt, "n": 3, "step": 3, "mode": "full", "model": "gpt-5-mini", "targets": []},
        ],
        "usage": {"input_tokens": 3000, "output_tokens": 1500, "reasoning_tokens": 0},
        "cost_usd": 0.0006,
        "latency_ms": 4500,
        "simulated": True,
    }


def settings_for(dsn: str | None) -> Settings:
    return Settings(
        sentry_dsn=dsn,
        openai_api_key=API_KEY,
        redis_url=f"redis://:{REDIS_PASSWORD}@127.0.0.1:6399/0",
    )


@pytest.fixture
def sentry_on(sentry_endpoint: SentryEndpoint) -> Iterator[SentryEndpoint]:
    """Sentry initialised by suture against the local endpoint; the global client is closed afterwards."""
    assert init_sentry(settings_for(sentry_endpoint.dsn)) is True
    try:
        yield sentry_endpoint
    finally:
        sentry_sdk.get_client().close()
        sentry_sdk.get_global_scope().set_client(None)


def sent_events(endpoint: SentryEndpoint, count: int) -> list[dict[str, Any]]:
    sentry_sdk.flush(timeout=5)
    return endpoint.wait_for_events(count)


def assert_no_secrets_or_content(endpoint: SentryEndpoint) -> None:
    for body in endpoint.raw_bodies():
        event_bytes = b"\n".join(line for line in body.split(b"\n")[1:])  # envelope header carries the key
        for forbidden in (API_KEY, REDIS_PASSWORD, PUBLIC_KEY, endpoint.dsn, DOCUMENT, OUTPUT_TEXT):
            assert forbidden.encode() not in event_bytes, forbidden


def test_soft_delivery_sends_one_warning_event_with_tags_context_and_fingerprint(
    sentry_on: SentryEndpoint,
) -> None:
    # Given a soft-delivered quiz job with two failure codes
    result = make_result("soft_delivered", codes=("imbalanced_options", "answer_position_skew"))

    # When it is reported
    report_final(result, "Quiz")

    # Then exactly one warning event arrives with the pinned message, tags, context and fingerprint
    events = sent_events(sentry_on, 1)
    assert len(events) == 1
    event = events[0]
    assert event["level"] == "warning"
    assert _message_of(event) == "Quiz delivered after contract retry exhaustion"
    assert event["tags"]["contract"] == "quiz"
    assert event["tags"]["final_model"] == "gpt-5-mini"
    assert event["tags"]["failure_codes"] == "answer_position_skew,imbalanced_options"
    assert event["tags"]["steps_used"] == "3"
    assert event["fingerprint"] == [
        "suture",
        "soft_delivered",
        "quiz",
        "answer_position_skew",
        "imbalanced_options",
    ]
    summary = event["contexts"]["attempt_summary"]
    assert summary["attempts"] == 3
    assert summary["surgical_attempts"] == 1
    assert summary["transport_retries"] == 3
    assert summary["cost_usd"] == pytest.approx(0.0006)
    assert summary["latency_ms"] == 4500
    assert summary["models"] == ["gpt-5-nano", "gpt-5-mini"]
    assert_no_secrets_or_content(sentry_on)


@pytest.mark.parametrize(
    ("status", "message", "level"),
    [
        ("failed", "Quiz job failed", "error"),
        ("refused", "Quiz refused by the model", "warning"),
    ],
)
def test_failed_and_refused_jobs_send_distinct_events(
    sentry_on: SentryEndpoint, status: str, message: str, level: str
) -> None:
    # Given a job that ended without an output
    result = make_result(status)

    # When it is reported
    report_final(result, "Quiz")

    # Then its own event arrives, grouped apart from soft-deliveries
    events = sent_events(sentry_on, 1)
    assert [(_message_of(e), e["level"], e["fingerprint"][1]) for e in events] == [(message, level, status)]
    assert_no_secrets_or_content(sentry_on)


def test_clean_delivery_sends_nothing(sentry_on: SentryEndpoint) -> None:
    # Given a job delivered on contract
    # When it is reported
    event_id = report_final(make_result("delivered", codes=()), "Quiz")

    # Then no event is sent
    sentry_sdk.flush(timeout=5)
    assert event_id is None
    assert sentry_on.events() == []


def test_scrubber_removes_secrets_and_content_added_by_anyone(sentry_on: SentryEndpoint) -> None:
    # Given code that (wrongly) puts a secret and a document into an event
    # When it is captured through the same SDK
    sentry_sdk.capture_message(
        f"connect failed with key {API_KEY} to {sentry_on.dsn}",
        level="error",
        extras={
            "job": {"document": DOCUMENT, "prompt": [OUTPUT_TEXT]},
            "url": f"redis://:{REDIS_PASSWORD}@h",
        },
    )

    # Then the event arrives with every secret and all content filtered
    events = sent_events(sentry_on, 1)
    assert len(events) == 1
    assert "[Filtered]" in json.dumps(events[0])
    assert_no_secrets_or_content(sentry_on)


def test_sentry_is_off_without_a_dsn(sentry_endpoint: SentryEndpoint) -> None:
    # Given settings without a DSN
    # When Sentry is initialised and a soft-delivery reported
    enabled = init_sentry(settings_for(None))
    report_final(make_result("soft_delivered"), "Quiz")

    # Then it stays off and nothing is sent anywhere
    assert enabled is False
    assert sentry_endpoint.events() == []


def _message_of(event: dict[str, Any]) -> str:
    return str(event.get("message") or event.get("logentry", {}).get("message"))


@pytest.mark.integration
def test_soft_delivered_job_on_real_workers_sends_one_scrubbed_event(
    sentry_endpoint: SentryEndpoint, celery_stack: Any, scripted_model: Any
) -> None:
    from tests.fixtures.scripted_model import document
    from workers.producer import enqueue

    # Given a real worker with SENTRY_DSN set and a model whose quiz always keeps one imbalanced question
    model = scripted_model(questions=4, imbalanced=1)
    stack = celery_stack(model.base_url, SENTRY_DSN=sentry_endpoint.dsn)
    stack.start_worker(concurrency=4)
    source = document(4)

    # When a job runs out of full-regeneration retries
    result = enqueue("quiz", source, questions=4, policy="full-only", settings=stack.settings).result(
        timeout_s=60
    )

    # Then it is soft-delivered and the worker sends exactly one warning event for it
    assert result["status"] == "soft_delivered"
    events = sentry_endpoint.wait_for_events(1, timeout_s=15)
    assert len(events) == 1
    event = events[0]
    assert (_message_of(event), event["level"]) == (
        "Quiz delivered after contract retry exhaustion",
        "warning",
    )
    assert event["tags"]["failure_codes"] == "imbalanced_options"
    assert event["tags"]["final_model"] == "gpt-5-mini"
    assert event["fingerprint"] == ["suture", "soft_delivered", "quiz", "imbalanced_options"]
    assert event["contexts"]["attempt_summary"]["attempts"] == 2
    for body in sentry_endpoint.raw_bodies():
        event_part = b"\n".join(body.split(b"\n")[1:])
        for forbidden in (
            "sk-test-not-a-real-key",
            PUBLIC_KEY,
            source,
            result["output"]["questions"][0]["question"],
        ):
            assert forbidden.encode() not in event_part
