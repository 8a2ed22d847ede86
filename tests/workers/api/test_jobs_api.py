"""``suture serve`` through a real server process, a real Redis and real workers: enqueue (JSON and a
multipart PDF), poll, result, trace, cancel, resume, idempotency, and a signed webhook verified with
the ``standardwebhooks`` library as a receiver would."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from standardwebhooks import Webhook
from standardwebhooks.webhooks import WebhookVerificationError

from suture.workers.store.job_store import get_store
from tests.fixtures.api_server import ApiServer, pdf_bytes
from tests.fixtures.receivers import WEBHOOK_SECRET, RecordingReceiver
from tests.fixtures.scripted_model import document
from tests.fixtures.workers import CeleryStack, wait_for

pytestmark = pytest.mark.integration


def finished(server: ApiServer, job_id: str, timeout_s: float = 60) -> dict[str, Any]:
    """Poll GET /v1/jobs/{id} until the job has a result; the response body."""
    deadline = time.monotonic() + timeout_s
    while True:
        body = server.call("GET", f"/v1/jobs/{job_id}").json()
        if body["result"] is not None:
            return dict(body)
        assert time.monotonic() < deadline, f"job {job_id} still {body['status']}"
        time.sleep(0.1)


def test_a_json_job_is_enqueued_polled_fetched_traced_and_called_back_signed(
    celery_stack: Callable[..., CeleryStack],
    scripted_model: Callable[..., Any],
    api_server: Callable[..., ApiServer],
    recording_receiver: Callable[..., RecordingReceiver],
) -> None:
    # Given workers, a model whose first quiz needs one surgical repair, a signing secret and the API
    model = scripted_model(questions=4, imbalanced=1)
    stack = celery_stack(model.base_url, SUTURE_WEBHOOK__SECRET=WEBHOOK_SECRET)
    stack.start_worker(concurrency=8)
    server = api_server(stack)
    receiver = recording_receiver()
    # When a web app enqueues a quiz with a callback
    body = {"contract": "quiz", "input": document(4), "questions": 4, "callback": receiver.url}
    created = server.call("POST", "/v1/jobs", json=body)
    # Then it is accepted with its id and Location
    assert created.status_code == 202, created.text
    job_id = created.json()["job_id"]
    assert created.json() == {"job_id": job_id, "status": "queued"}
    assert created.headers["Location"] == f"/v1/jobs/{job_id}"
    # And polling it ends with the same result `suture result` prints
    view = finished(server, job_id)
    assert view["status"] == "delivered" and view["result"]["status"] == "delivered"
    cli = json.loads(stack.cli("result", job_id, "--timeout", "5").stdout)
    assert view["result"] == cli
    # And its trace holds both attempts, as `suture trace`
    trace = server.call("GET", f"/v1/jobs/{job_id}/trace").json()
    assert [a["mode"] for a in trace["attempts"]] == ["full", "surgical"]
    assert trace["attempts"] == json.loads(stack.cli("trace", job_id).stdout)
    # And the callback came once, signed: the standardwebhooks library accepts it...
    wait_for(lambda: len(receiver.received()) == 1, timeout_s=30)
    post = receiver.received()[0]
    assert post.headers["webhook-id"] == job_id
    assert Webhook(WEBHOOK_SECRET).verify(post.body, post.headers) == view["result"]
    # ...and rejects the same delivery with a tampered body
    tampered = post.body.replace(b'"delivered"', b'"failed"', 1)
    with pytest.raises(WebhookVerificationError):
        Webhook(WEBHOOK_SECRET).verify(tampered, post.headers)


def test_a_pdf_uploaded_as_multipart_is_read_like_a_batch_document(
    celery_stack: Callable[..., CeleryStack],
    scripted_model: Callable[..., Any],
    api_server: Callable[..., ApiServer],
    tmp_path: Path,
) -> None:
    # Given workers and the API
    model = scripted_model(questions=3)
    stack = celery_stack(model.base_url)
    stack.start_worker(concurrency=4)
    server = api_server(stack)
    # When a PDF is uploaded with form fields
    pdf = pdf_bytes(document(3), tmp_path / "course.pdf")
    created = server.call(
        "POST", "/v1/jobs", files={"file": ("course.pdf", pdf, "application/pdf")}, data={"questions": "3"}
    )
    # Then the job's document is the PDF's text, and it is delivered (every quote found in that text)
    assert created.status_code == 202, created.text
    job_id = created.json()["job_id"]
    stored = get_store(stack.settings).load(job_id).spec
    assert "the study of rivers is topic number 1" in " ".join(stored["source"].split())
    assert (
        stored["params"]["questions"] == 3 and "rules" in stored["params"]
    )  # complete, as enqueue stores them
    assert finished(server, job_id)["result"]["status"] == "delivered"


def test_cancel_then_resume_change_jobs_as_the_cli_would(
    celery_stack: Callable[..., CeleryStack],
    scripted_model: Callable[..., Any],
    api_server: Callable[..., ApiServer],
    recording_receiver: Callable[..., Any],
) -> None:
    # Given a model that soft-delivers under full-only (one question stays imbalanced) unless told
    model = scripted_model(questions=4, imbalanced=1, latency_s=0.3)
    stack = celery_stack(model.base_url)
    stack.start_worker(concurrency=8)
    server = api_server(stack)
    slow = server.call("POST", "/v1/jobs", json={"input": document(4), "questions": 4}).json()["job_id"]
    # When a running job is cancelled, twice
    first = server.call("POST", f"/v1/jobs/{slow}/cancel", json={"reason": "teacher changed her mind"})
    again = server.call("POST", f"/v1/jobs/{slow}/cancel")
    # Then the first cancels it (its reason kept) and the second is a 409 naming its status
    assert (first.status_code, first.json()) == (200, {"job_id": slow, "status": "cancelled"})
    assert finished(server, slow)["result"]["reason"] == "teacher changed her mind"
    assert again.status_code == 409 and again.json()["code"] == "job-finished"
    assert "cancelled" in again.json()["detail"]
    # When a soft-delivered job is resumed with feedback
    soft = server.call("POST", "/v1/jobs", json={"input": document(4), "questions": 4, "policy": "full-only"})
    job_id = soft.json()["job_id"]
    assert finished(server, job_id)["status"] == "soft_delivered"
    # ...with a new callback (targets reach the engine as `suture resume --target`'s: one naming nothing is a
    # 422)
    receiver = recording_receiver()
    bad = server.call("POST", f"/v1/jobs/{job_id}/resume", json={"feedback": "x", "targets": ["/nowhere"]})
    assert bad.status_code == 422 and bad.json()["field"] == "target"
    resumed = server.call(
        "POST",
        f"/v1/jobs/{job_id}/resume",
        json={"feedback": "Balance every option.", "callback": receiver.url},
    )
    # Then it runs a new round and is delivered, and the new callback gets that round's result;
    # resuming a delivered job is a 409
    assert resumed.status_code == 202 and resumed.headers["Location"] == f"/v1/jobs/{job_id}"
    wait_for(lambda: server.call("GET", f"/v1/jobs/{job_id}").json()["status"] == "delivered", timeout_s=60)
    assert finished(server, job_id)["result"]["round"] == 1
    wait_for(lambda: len(receiver.received()) == 1, timeout_s=30)
    assert receiver.received()[0].headers["webhook-id"] == f"{job_id}_1"
    refused = server.call("POST", f"/v1/jobs/{job_id}/resume", json={"feedback": "again"})
    assert refused.status_code == 409 and refused.json()["code"] == "not-resumable"


def test_an_idempotency_key_gives_one_job_per_request_and_409_for_another_body(
    celery_stack: Callable[..., CeleryStack], api_server: Callable[..., ApiServer]
) -> None:
    # Given the API (no workers needed: jobs stay queued)
    server = api_server(celery_stack("http://127.0.0.1:9/v1"))
    body = {"input": document(3), "questions": 3}
    headers = {"Idempotency-Key": "order-17"}
    # When the same request is sent twice with one key, and another body with the same key
    first = server.call("POST", "/v1/jobs", json=body, headers=headers)
    again = server.call("POST", "/v1/jobs", json=body, headers=headers)
    other = server.call("POST", "/v1/jobs", json=body | {"questions": 2}, headers=headers)
    # Then the first two name one job, and the third is a 409 naming the key and that job
    assert first.status_code == again.status_code == 202
    assert first.json()["job_id"] == again.json()["job_id"]
    assert other.status_code == 409 and other.json()["code"] == "idempotency-conflict"
    assert "order-17" in other.json()["detail"] and first.json()["job_id"] in other.json()["detail"]


def test_teaching_knobs_in_a_json_job_are_stored_with_it_and_bad_ones_are_422(
    celery_stack: Callable[..., CeleryStack],
    scripted_model: Callable[..., Any],
    api_server: Callable[..., ApiServer],
) -> None:
    # Given the API on a stack (no worker needed: only what enqueue stores is looked at)
    stack = celery_stack(scripted_model(questions=3).base_url)
    server = api_server(stack)
    # When a job asks for true/false questions for an audience, the language left to detection
    body = {"input": document(3), "questions": 3, "question_kinds": ["true_false"], "audience": "nurses"}
    created = server.call("POST", "/v1/jobs", json=body)
    # Then its stored rules say so, with the document's language detected
    assert created.status_code == 202, created.text
    rules = get_store(stack.settings).load(created.json()["job_id"]).spec["params"]["rules"]
    assert rules["question_kinds"] == ["true_false"] and rules["audience"] == "nurses"
    assert rules["language"] == "en"
    # And a language the quiz cannot be asked in is a 422 naming it
    refused = server.call("POST", "/v1/jobs", json=body | {"language": "xx"})
    assert refused.status_code == 422 and "language must be auto or one of" in refused.text
