"""Sentry events of finished jobs, sent by the real sentry-sdk to a local envelope endpoint."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
import sentry_sdk

from suture.config.service_settings import SentrySettings
from suture.config.settings import Settings
from suture.workers.runtime.alerts import JobFacts, report_final
from suture.workers.runtime.sentry import init_sentry, scrub_text
from tests.fixtures.sentry_endpoint import PUBLIC_KEY, SentryEndpoint

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


def facts(public_url: str | None = None, job_id: str = "job-123") -> JobFacts:
    """What the runtime observer tells an alert about a job from a batch."""
    return JobFacts(
        job_id=job_id,
        contract="quiz",
        title="Quiz",
        params={"questions": 3},
        policy="full-only",
        batch="batch-7",
        origin={"file": "photosynthesis.md", "section": 2, "title": "Light reactions", "pages": None},
        public_url=public_url,
        sensitive=[DOCUMENT, OUTPUT_TEXT],
        tenant="acme",
    )


def test_soft_delivery_sends_one_warning_a_person_can_act_on(sentry_on: SentryEndpoint) -> None:
    # Given a soft-delivered quiz job from a batch with two failure codes, imbalanced_options twice
    result = make_result(
        "soft_delivered", codes=("imbalanced_options", "answer_position_skew", "imbalanced_options")
    )

    # When it is reported
    report_final(result, facts())

    # Then exactly one warning arrives, titled and grouped by its contract and dominant code
    events = sent_events(sentry_on, 1)
    assert len(events) == 1
    event = events[0]
    assert event["level"] == "warning"
    assert _message_of(event) == "Quiz delivered after contract retry exhaustion: imbalanced_options"
    assert event["fingerprint"] == ["suture", "soft_delivered", "quiz", "imbalanced_options"]
    # ...with every code as a tag
    tags = event["tags"]
    assert (tags["contract"], tags["final_model"], tags["dominant_code"]) == (
        "quiz",
        "gpt-5-mini",
        "imbalanced_options",
    )
    assert tags["failure_codes"] == "answer_position_skew,imbalanced_options"
    assert (tags["code.imbalanced_options"], tags["code.answer_position_skew"]) == ("2", "1")
    assert (tags["policy"], tags["batch"], tags["job_id"]) == ("full-only", "batch-7", "job-123")
    assert tags["tenant"] == "acme" and event["release"].startswith("suture@")
    # ...the remaining failures as pointer, code and message (scrubbed of the quiz's text)
    remaining = event["contexts"]["remaining_failures"]
    assert remaining["count"] == 3
    assert [(f["pointer"], f["code"]) for f in remaining["shown"]] == [
        ("/questions/0/options", "imbalanced_options"),
        ("/questions/1/options", "answer_position_skew"),
        ("/questions/2/options", "imbalanced_options"),
    ]
    assert all(f["message"] == "[Filtered] bad" for f in remaining["shown"])
    # ...the reason, policy, contract and parameters, where it came from, and how to fix it
    job = event["contexts"]["job"]
    assert (job["reason"], job["policy"], job["contract"], job["params"]) == (
        "retries exhausted",
        "full-only",
        "quiz",
        {"questions": 3},  # structured, not a cut string
    )
    assert event["contexts"]["origin"] == {
        "file": "photosynthesis.md",
        "section": 2,
        "title": "Light reactions",
        "batch": "batch-7",
    }
    assert event["contexts"]["review"] == {
        "see": "suture result job-123",
        "fix": 'suture resume job-123 --feedback "what to change"',
    }
    summary = event["contexts"]["attempt_summary"]
    assert (summary["attempts"], summary["surgical_attempts"], summary["transport_retries"]) == (3, 1, 3)
    assert summary["cost_usd"] == pytest.approx(0.0006)
    assert summary["models"] == ["gpt-5-nano", "gpt-5-mini"]
    assert_no_secrets_or_content(sentry_on)


def test_the_alert_links_to_the_review_page_when_the_api_has_a_public_url(sentry_on: SentryEndpoint) -> None:
    # Given api.public_url is set (suture serve runs behind it)
    # When a soft-delivery is reported
    report_final(make_result("soft_delivered"), facts(public_url="https://quizzes.example.org/"))

    # Then the alert links to the job's review page
    [event] = sent_events(sentry_on, 1)
    assert event["contexts"]["review"] == {"url": "https://quizzes.example.org/review/jobs/job-123"}


def test_soft_deliveries_group_by_their_dominant_code_not_their_exact_set_of_codes(
    sentry_on: SentryEndpoint,
) -> None:
    # Given soft-deliveries with codes {A}, {A, A, B} and {B}
    for codes in (
        ("imbalanced_options",),
        ("imbalanced_options", "imbalanced_options", "not_a_question"),
        ("not_a_question",),
    ):
        report_final(make_result("soft_delivered", codes=codes), facts())

    # Then the first two share a group and the third has its own
    events = sent_events(sentry_on, 3)
    assert [e["fingerprint"][-1] for e in events] == [
        "imbalanced_options",
        "imbalanced_options",
        "not_a_question",
    ]


@pytest.mark.parametrize(
    ("status", "cause", "message", "level", "fingerprint"),
    [
        ("failed", "auth", "Quiz job failed: auth", "error", ["suture", "failed", "quiz", "auth"]),
        (
            "failed",
            "deadline",
            "Quiz job failed: deadline",
            "error",
            ["suture", "failed", "quiz", "deadline"],
        ),
        ("refused", None, "Quiz refused by the model", "warning", ["suture", "refused", "quiz"]),
    ],
)
def test_hard_failures_group_by_cause_with_the_cause_in_the_title(
    sentry_on: SentryEndpoint,
    status: str,
    cause: str | None,
    message: str,
    level: str,
    fingerprint: list[str],
) -> None:
    # Given a job that ended without an output, for a cause
    result = make_result(status) | {"cause": cause}

    # When it is reported
    report_final(result, facts())

    # Then its own event arrives, titled and grouped by its cause
    events = sent_events(sentry_on, 1)
    assert [(_message_of(e), e["level"], e["fingerprint"], e["tags"]["cause"]) for e in events] == [
        (message, level, fingerprint, cause or "none")
    ]
    assert_no_secrets_or_content(sentry_on)


@pytest.mark.parametrize(
    ("cause", "hint"),
    [("auth", "OPENAI_API_KEY"), ("deadline", "worker.job_deadline_s"), ("budget", "budget_usd")],
)
def test_a_failed_job_hints_at_its_cause_never_at_resume(
    sentry_on: SentryEndpoint, cause: str, hint: str
) -> None:
    # When a job that failed for a cause is reported
    report_final(make_result("failed") | {"cause": cause}, facts())

    # Then its event says what to fix for that cause, and never suggests resume (which refuses failed jobs)
    [event] = sent_events(sentry_on, 1)
    review = event["contexts"]["review"]
    assert hint in review["fix"] and "resume" not in json.dumps(review)


@pytest.mark.parametrize("status", ["soft_delivered", "failed"])
def test_a_job_given_up_for_an_internal_error_sends_no_alert_of_its_own(
    sentry_on: SentryEndpoint, status: str
) -> None:
    # Given a job given up because of an internal error (reported once, as the error itself)
    # When its ending is reported, Then nothing more is sent
    assert report_final(make_result(status) | {"cause": "internal"}, facts()) is None
    sentry_sdk.flush(timeout=5)
    assert sentry_on.events() == []


def test_clean_delivery_sends_nothing(sentry_on: SentryEndpoint) -> None:
    # Given a job delivered on contract
    # When it is reported
    event_id = report_final(make_result("delivered", codes=()), facts())

    # Then no event is sent
    sentry_sdk.flush(timeout=5)
    assert event_id is None
    assert sentry_on.events() == []


def test_text_scrubbing_removes_runs_of_the_job_text_and_pydantic_input_values() -> None:
    # Given an error text quoting a document and a pydantic error quoting its input
    text = f"bad quote '{DOCUMENT[10:60]}' [type=int_parsing, input_value='{OUTPUT_TEXT}', input_type=str]"

    # When it is scrubbed with the job's text
    scrubbed = scrub_text(text, [DOCUMENT])

    # Then neither the document's run nor the input value is left, and the rest reads as before
    assert scrubbed == "bad quote '[Filtered]' [type=int_parsing, input_value=[Filtered], input_type=str]"


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
    report_final(make_result("soft_delivered"), facts())

    # Then it stays off and nothing is sent anywhere
    assert enabled is False
    assert sentry_endpoint.events() == []


def _message_of(event: dict[str, Any]) -> str:
    return str(event.get("message") or event.get("logentry", {}).get("message"))


@pytest.mark.parametrize(("configured", "expected"), [(None, "simulation"), ("staging", "staging")])
def test_a_simulated_run_reports_to_the_simulation_environment_unless_one_is_configured(
    sentry_endpoint: SentryEndpoint, configured: str | None, expected: str
) -> None:
    # Given Sentry started with or without a configured environment
    settings = settings_for(sentry_endpoint.dsn).model_copy(
        update={"sentry": SentrySettings(environment=configured)}
    )
    assert init_sentry(settings) is True
    try:
        # When a job of a simulated run is reported
        report_final(make_result("soft_delivered"), facts())
        [event] = sent_events(sentry_endpoint, 1)
    finally:
        sentry_sdk.get_client().close()
        sentry_sdk.get_global_scope().set_client(None)

    # Then its environment says so, unless one was configured
    assert event["environment"] == expected
