"""Idempotency keys belong to one tenant and one request; no caller reaches another's job (issue 23, section
3); a tenant's review list is its own, and the operator's jobs are read only by operator keys (issue 33).

Through real processes: a real Redis, real worker processes on the perfect simulated model, a real
webhook receiver on loopback and a real ``suture serve`` with two API keys. Tenants A and B enqueue
different documents under the same idempotency key: B gets its own job, with its own result and
prompts, and its callback, policy and question count are honoured. The same key with another request
from the same tenant is an ``IdempotencyConflict`` (HTTP 409) naming the key and its job. Over HTTP a
job of another key answers 404 to every read and action, the review pages included. Tenant B's 445
soft-delivered jobs leave tenant A's review list as it was. A job enqueued without a tenant
(``suture enqueue``) answers 404 to an ordinary key, is read by an operator key, and no key acts on it.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import re
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from suture.config.service_settings import ApiKey
from suture.workers.api.auth import ApiKeys
from suture.workers.errors import IdempotencyConflict, InvalidJob, JobNotFound
from suture.workers.producer import cancel, enqueue, get_job
from suture.workers.store.job_store import get_store
from tests.fixtures.api_server import ApiServer
from tests.fixtures.scripted_model import document
from tests.fixtures.workers import REPO, CeleryStack, WebhookReceiver, wait_for

pytestmark = pytest.mark.integration

DOC_A = (REPO / "examples" / "photosynthesis.md").read_text()[:1500]
DOC_B = (REPO / "examples" / "french_revolution.md").read_text()[:1400]  # another length than A's
WORDS = {"A": ("photosynth", "chlorophyll", "sunlight"), "B": ("revolution", "monarchy", "napoleon")}
KEY = "order-17"
KEY_A, KEY_B = "tenant-a-key-0123456789abcdef", "tenant-b-key-0123456789abcdef"
KEY_OPERATOR = "operator-key-0123456789abcdef"
SOFT_BODY = {"input": document(4), "questions": 4, "policy": "full-only"}  # one question stays imbalanced
REVIEW_LINK = re.compile(r'href="/review/jobs/([0-9a-f]{32})"')


@pytest.fixture
def stack(celery_stack: Callable[..., CeleryStack], simulator: Callable[..., str]) -> CeleryStack:
    """Redis and one worker on the perfect simulated model."""
    stack = celery_stack(simulator("perfect"))
    stack.start_worker(concurrency=8)
    return stack


def content(result: dict[str, Any]) -> str:
    """What a caller receives of a result's content: its quiz and its attempts' prompts, as text.

    (A stored prompt names the document by its length, not its text: the quiz shows whose it is.)
    """
    prompts = [attempt.get("prompt") for attempt in result["attempts"]]
    return json.dumps([result["output"], prompts], ensure_ascii=False).lower()


def whose(result: dict[str, Any]) -> set[str]:
    """Which of the two documents a result's quiz and prompts come from."""
    text = content(result)
    return {name for name, words in WORDS.items() if any(word in text for word in words)}


def test_two_tenants_with_one_key_get_two_jobs_each_its_own_request(
    stack: CeleryStack, webhook_receiver: WebhookReceiver
) -> None:
    # Given tenant A's job under key order-17
    settings = stack.settings
    job_a = enqueue("quiz", DOC_A, questions=3, idempotency_key=KEY, tenant="a", settings=settings)
    # When tenant B enqueues another document under the same key, with its own callback, policy and count
    job_b = enqueue(
        "quiz",
        DOC_B,
        questions=2,
        policy="full-only",
        callback=webhook_receiver.url,
        idempotency_key=KEY,
        tenant="b",
        settings=settings,
    )
    # Then B has a job of its own...
    assert job_b.id != job_a.id
    result_a, result_b = job_a.result(timeout_s=60), job_b.result(timeout_s=60)
    # ...whose result is B's quiz (2 questions), from prompts that hold B's document, never A's
    assert result_b["status"] == "delivered" and len(result_b["output"]["questions"]) == 2
    assert whose(result_b) == {"B"} and whose(result_a) == {"A"}
    assert len(result_a["output"]["questions"]) == 3
    # ...its prompts carried a document of B's length, never A's
    assert f"source document, {len(DOC_B)} characters" in content(result_b)
    assert f"source document, {len(DOC_A)} characters" not in content(result_b)
    # ...run under B's policy, and B's callback fires for B's job only
    assert job_b.spec()["policy"] == "full-only" and job_a.spec()["policy"] == "default"
    wait_for(lambda: webhook_receiver.received.get(job_b.id) == 1, timeout_s=30)
    assert job_a.id not in webhook_receiver.received
    # And each tenant's retry with its own request finds its own job again
    again_b = enqueue(
        "quiz",
        DOC_B,
        questions=2,
        policy="full-only",
        callback=webhook_receiver.url,
        idempotency_key=KEY,
        tenant="b",
        settings=settings,
    )
    assert again_b.id == job_b.id
    assert (
        enqueue("quiz", DOC_A, questions=3, idempotency_key=KEY, tenant="a", settings=settings).id == job_a.id
    )


def test_one_key_with_another_request_is_a_conflict_naming_the_key_and_its_job(stack: CeleryStack) -> None:
    # Given a tenant's job under a key
    first = enqueue("quiz", DOC_A, questions=3, idempotency_key=KEY, tenant="a", settings=stack.settings)
    # When the same tenant sends another request (another document, then another count) under it
    for text, questions in ((DOC_B, 3), (DOC_A, 2)):
        with pytest.raises(IdempotencyConflict) as raised:
            enqueue(
                "quiz",
                text,
                questions=questions,
                idempotency_key=KEY,
                tenant="a",
                settings=stack.settings,
            )
        # Then the conflict names the key and the job it already names; no job is handed back
        assert raised.value.key == KEY and raised.value.job_id == first.id
        assert f"'{KEY}'" in str(raised.value) and first.id in str(raised.value)


def test_a_tenant_is_checked_and_the_python_reads_given_one_see_only_its_jobs(stack: CeleryStack) -> None:
    # A tenant or key holding a control character could forge another's scope: refused, nothing stored
    for tenant, key in (("a\x1fb", KEY), ("a", "k\x1fx"), ("", KEY), ("x" * 129, KEY)):
        with pytest.raises(InvalidJob):
            enqueue("quiz", DOC_A, idempotency_key=key, tenant=tenant, settings=stack.settings)
    job = enqueue("quiz", DOC_A, questions=2, tenant="a", settings=stack.settings)
    # Tenant b's reads find no such job; a's, and a reader without a tenant, find it
    with pytest.raises(JobNotFound):
        get_job(job.id, stack.settings, tenant="b")
    with pytest.raises(JobNotFound):
        cancel(job.id, settings=stack.settings, tenant="b")
    assert get_job(job.id, stack.settings, tenant="a").id == get_job(job.id, stack.settings).id == job.id


def test_the_cli_scopes_its_key_by_tenant(stack: CeleryStack) -> None:
    document = str(REPO / "examples" / "photosynthesis.md")
    ids = []
    for tenant in ("a", "b", "a"):
        done = stack.cli(
            "enqueue", document, "--questions", "2", "--idempotency-key", KEY, "--tenant", tenant
        )
        assert done.returncode == 0, done.stderr
        ids.append(done.stdout.strip())
    assert ids[0] != ids[1] and ids[0] == ids[2]


def test_over_http_each_key_is_a_tenant_and_another_keys_job_is_a_404(
    stack: CeleryStack, api_server: Callable[..., ApiServer], webhook_receiver: WebhookReceiver
) -> None:
    server = api_server(stack, SUTURE_API__KEYS=json.dumps([KEY_A, KEY_B]))
    headers = {"Idempotency-Key": KEY}
    # Given A's soft-delivered-or-not job under key order-17
    body_a = {"input": DOC_A, "questions": 3}
    created_a = server.call("POST", "/v1/jobs", key=KEY_A, json=body_a, headers=headers)
    assert created_a.status_code == 202, created_a.text
    job_a = created_a.json()["job_id"]
    # When B posts another document under the same key, with its callback, policy and count
    body_b = {"input": DOC_B, "questions": 2, "policy": "full-only", "callback": webhook_receiver.url}
    created_b = server.call("POST", "/v1/jobs", key=KEY_B, json=body_b, headers=headers)
    # Then B gets a job of its own, with its own result, prompts and callback
    assert created_b.status_code == 202, created_b.text
    job_b = created_b.json()["job_id"]
    assert job_b != job_a
    wait_for(lambda: server.call("GET", f"/v1/jobs/{job_b}", key=KEY_B).json()["status"] == "delivered", 60)
    result_b = server.call("GET", f"/v1/jobs/{job_b}", key=KEY_B).json()["result"]
    assert len(result_b["output"]["questions"]) == 2 and result_b["policy"] == "full-only"
    assert whose(result_b) == {"B"}
    wait_for(lambda: webhook_receiver.received.get(job_b) == 1, timeout_s=30)
    # And B reaches nothing of A's job: every read and action is a 404, as for a job that does not exist
    calls = [
        ("GET", f"/v1/jobs/{job_a}", {}),
        ("GET", f"/v1/jobs/{job_a}/trace", {}),
        ("POST", f"/v1/jobs/{job_a}/cancel", {"json": {}}),
        ("POST", f"/v1/jobs/{job_a}/resume", {"json": {"feedback": "more"}}),
        ("GET", f"/review/jobs/{job_a}", {}),
    ]
    missing = server.call("GET", f"/v1/jobs/{'f' * 32}", key=KEY_B)
    for method, path, extra in calls:
        answer = server.call(method, path, key=KEY_B, **extra)
        assert answer.status_code == 404, (path, answer.status_code, answer.text)
        assert answer.json()["code"] == missing.json()["code"] and job_a in answer.text
    # ...while A still has its job, untouched by B's cancel
    view_a = server.call("GET", f"/v1/jobs/{job_a}", key=KEY_A).json()
    assert view_a["status"] != "cancelled"
    # And A's other request under its own key is a 409 naming the key and A's job
    conflict = server.call("POST", "/v1/jobs", key=KEY_A, json=body_b, headers=headers)
    assert conflict.status_code == 409 and KEY in conflict.text and job_a in conflict.text


def test_the_review_pages_show_a_key_only_its_own_jobs(
    celery_stack: Callable[..., CeleryStack],
    scripted_model: Callable[..., Any],
    api_server: Callable[..., ApiServer],
) -> None:
    # Given A's soft-delivered job (the full-only chain leaves one question imbalanced)
    stack = celery_stack(scripted_model(questions=4, imbalanced=1).base_url)
    stack.start_worker(concurrency=4)
    server = api_server(stack, SUTURE_API__KEYS=json.dumps([KEY_A, KEY_B]))
    body = {"input": document(4), "questions": 4, "policy": "full-only"}
    job_a = server.call("POST", "/v1/jobs", key=KEY_A, json=body).json()["job_id"]
    wait_for(
        lambda: server.call("GET", f"/v1/jobs/{job_a}", key=KEY_A).json()["status"] == "soft_delivered", 60
    )
    # Then A's review list shows it, B's does not
    assert job_a in server.call("GET", "/review", key=KEY_A).text
    assert job_a not in server.call("GET", "/review", key=KEY_B).text
    # And B's forms, with tokens valid for B, reach nothing: 404, and the job stays as it was
    token_b = hmac.new(KEY_B.encode(), f"review:{job_a}".encode(), hashlib.sha256).hexdigest()[:32]
    for action in ("accept", "cancel"):
        answer = server.call("POST", f"/review/jobs/{job_a}/{action}", key=KEY_B, data={"token": token_b})
        assert answer.status_code == 404, (action, answer.status_code, answer.text)
    resumed = server.call(
        "POST", f"/review/jobs/{job_a}/resume", key=KEY_B, data={"token": token_b, "feedback": "shorter"}
    )
    assert resumed.status_code == 404
    assert server.call("GET", f"/v1/jobs/{job_a}", key=KEY_A).json()["status"] == "soft_delivered"


def review_list(server: ApiServer, key: str) -> list[str]:
    """The job ids on a key's review page, in the page's order."""
    page = server.call("GET", "/review", key=key)
    assert page.status_code == 200, page.text
    return list(dict.fromkeys(REVIEW_LINK.findall(page.text)))


def form_token(key: str, job_id: str) -> str:
    """The token a key's review page of the job carries (``Caller.form_token``)."""
    return hmac.new(key.encode(), f"review:{job_id}".encode(), hashlib.sha256).hexdigest()[:32]


def wait_status(server: ApiServer, key: str, job_id: str, status: str) -> None:
    wait_for(lambda: server.call("GET", f"/v1/jobs/{job_id}", key=key).json()["status"] == status, 60)


def test_another_tenants_445_soft_delivered_jobs_leave_a_review_list_unchanged(
    celery_stack: Callable[..., CeleryStack],
    scripted_model: Callable[..., Any],
    api_server: Callable[..., ApiServer],
) -> None:
    # Given tenant A's soft-delivered job on A's review list (run by a real worker)
    stack = celery_stack(scripted_model(questions=4, imbalanced=1).base_url)
    stack.start_worker(concurrency=4)
    server = api_server(stack, SUTURE_API__KEYS=json.dumps([KEY_A, KEY_B]))
    job_a = server.call("POST", "/v1/jobs", key=KEY_A, json=SOFT_BODY).json()["job_id"]
    wait_status(server, KEY_A, job_a, "soft_delivered")
    before = review_list(server, KEY_A)
    assert before == [job_a]
    # When tenant B has 445 jobs that end soft-delivered after it: one run by the worker, 444 more stored
    # and delivered by the store's own scripts, as a worker delivers them
    job_b = server.call("POST", "/v1/jobs", key=KEY_B, json=SOFT_BODY).json()["job_id"]
    wait_status(server, KEY_B, job_b, "soft_delivered")
    store = get_store(stack.settings)
    ran = store.load(job_b)
    assert ran.result is not None and ran.tenant == tenant_of(KEY_B)
    for _ in range(444):
        job_id, *_ = store.create(uuid.uuid4().hex, ran.spec, deadline_s=time.time() + 600, tenant=ran.tenant)
        assert store.deliver(job_id, ran.result | {"job_id": job_id})
    # Then A's review list is exactly as it was (the 200 newest of every tenant's would hold none of A's)
    assert job_a not in [job_id for job_id, _ in store.waiting_review(200)]
    assert review_list(server, KEY_A) == before
    # And B's list shows B's own newest jobs, a full page of them, and none of A's
    listed_b = review_list(server, KEY_B)
    assert len(listed_b) == 200 and job_a not in listed_b and job_b not in listed_b


def tenant_of(key: str) -> str:
    """The tenant the API server stores a key's jobs under."""
    caller = ApiKeys([ApiKey.model_validate(key)]).identify(key)
    assert caller is not None
    return caller.tenant


def test_a_job_enqueued_without_a_tenant_is_read_by_operator_keys_only_and_acted_on_by_none(
    celery_stack: Callable[..., CeleryStack],
    scripted_model: Callable[..., Any],
    api_server: Callable[..., ApiServer],
    tmp_path: Path,
) -> None:
    # Given a job the operator enqueued from the CLI, without a tenant, soft-delivered by a real worker
    stack = celery_stack(scripted_model(questions=4, imbalanced=1).base_url)
    stack.start_worker(concurrency=4)
    keys = [KEY_A, {"key": KEY_OPERATOR, "operator": True}]
    server = api_server(stack, SUTURE_API__KEYS=json.dumps(keys))
    source = tmp_path / "notes.md"
    source.write_text(document(4), encoding="utf-8")
    done = stack.cli("enqueue", str(source), "--questions", "4", "--policy", "full-only")
    assert done.returncode == 0, done.stderr
    job = done.stdout.strip()
    wait_for(lambda: get_job(job, stack.settings).status() == "soft_delivered", timeout_s=60)
    assert get_store(stack.settings).tenant(job) is None

    # Then an ordinary key reaches nothing of it: every read and action is a 404, as for no job at all
    calls = [
        ("GET", f"/v1/jobs/{job}", {}),
        ("GET", f"/v1/jobs/{job}/trace", {}),
        ("GET", f"/review/jobs/{job}", {}),
        ("POST", f"/v1/jobs/{job}/cancel", {"json": {}}),
        ("POST", f"/v1/jobs/{job}/resume", {"json": {"feedback": "more"}}),
        ("POST", f"/review/jobs/{job}/accept", {"data": {"token": form_token(KEY_A, job)}}),
    ]
    for method, path, extra in calls:
        answer = server.call(method, path, key=KEY_A, **extra)
        assert answer.status_code == 404, (path, answer.status_code, answer.text)
        assert answer.json()["code"] == "job-not-found"
    assert job not in review_list(server, KEY_A)

    # And an operator key reads it: its status, its trace, its review page (without forms) and the list
    view = server.call("GET", f"/v1/jobs/{job}", key=KEY_OPERATOR)
    assert view.status_code == 200 and view.json()["status"] == "soft_delivered"
    trace = server.call("GET", f"/v1/jobs/{job}/trace", key=KEY_OPERATOR)
    assert trace.status_code == 200 and trace.json()["attempts"]
    page = server.call("GET", f"/review/jobs/{job}", key=KEY_OPERATOR)
    assert page.status_code == 200 and "without a tenant" in page.text and 'name="token"' not in page.text
    assert job in review_list(server, KEY_OPERATOR)

    # But no key acts on it, the operator's neither: each action is a 403 problem saying why
    token = form_token(KEY_OPERATOR, job)
    actions = [
        ("POST", f"/v1/jobs/{job}/cancel", {"json": {}}),
        ("POST", f"/v1/jobs/{job}/resume", {"json": {"feedback": "more"}}),
        ("POST", f"/review/jobs/{job}/accept", {"data": {"token": token}}),
        ("POST", f"/review/jobs/{job}/cancel", {"data": {"token": token}}),
        ("POST", f"/review/jobs/{job}/resume", {"data": {"token": token, "feedback": "more"}}),
    ]
    for method, path, extra in actions:
        answer = server.call(method, path, key=KEY_OPERATOR, **extra)
        assert answer.status_code == 403, (path, answer.status_code, answer.text)
        assert answer.headers["content-type"].startswith("application/problem+json")
        problem = answer.json()
        assert problem["code"] == "operator-job" and job in problem["detail"]
        assert "without a tenant" in problem["detail"] and "suture review OUT" in problem["detail"]
    assert server.call("GET", f"/v1/jobs/{job}", key=KEY_OPERATOR).json()["status"] == "soft_delivered"

    # While the operator still acts on it from the CLI
    resumed = stack.cli("resume", job, "--feedback", "balance the options")
    assert resumed.returncode == 0, resumed.stderr
    wait_for(lambda: get_job(job, stack.settings).status() == "delivered", timeout_s=60)
