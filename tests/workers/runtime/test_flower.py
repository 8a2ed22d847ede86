"""The real Flower, on the test broker, sees suture's workers, tasks by name and state, and job progress."""

from __future__ import annotations

import json
import urllib.error
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from celery import Celery

from suture.workers.runtime.events import PROGRESS_STATE, report_progress
from tests.fixtures.flower import FlowerServer, start_flower, stop_flower
from tests.fixtures.scripted_model import document

pytestmark = pytest.mark.integration

DOCUMENT = document(4)
EXPECTED = {
    ("suture.attempt", "SUCCESS"),
    ("suture.surgical_slice", "SUCCESS"),
    ("suture.merge", "SUCCESS"),  # the last merge delivers in place (suture.deliver is the watchdog's)
}


@pytest.fixture(scope="module")
def probe_app(redis_url: str) -> Iterator[Celery]:
    """A separate Celery app on the test broker whose bound task sends events like a running suture task."""
    app = Celery("suture-probe", broker=redis_url)
    try:
        yield app
    finally:
        app.close()


def test_flower_api_refuses_requests_without_basic_auth(flower: FlowerServer) -> None:
    # Given Flower started with FLOWER_BASIC_AUTH, as in docker-compose
    # When the API is called without credentials
    with pytest.raises(urllib.error.HTTPError) as refused:
        flower.get_json("/api/workers", auth=False)

    # Then it is refused
    refused.value.close()
    assert refused.value.code == 401


@pytest.mark.parametrize(("step", "attempt", "failures"), [(0, 1, 3), (2, 4, 0)])
def test_progress_event_shows_in_flower(
    flower: FlowerServer, probe_app: Celery, step: int, attempt: int, failures: int
) -> None:
    # Given a running task (its request id is what Flower keys tasks by)
    @probe_app.task(bind=True, name=f"suture.probe_{step}")
    def probe(self: Any) -> None:
        pass

    task_id = str(uuid.uuid4())
    probe.push_request(id=task_id, hostname="probe@test")
    try:
        # When it reports the job's progress
        report_progress(probe, "job-42", step=step, attempt=attempt, failures=failures, status="validating")
    finally:
        probe.pop_request()

    # Then Flower shows the task in the PROGRESS state with step, attempt and failure count
    info = flower.wait_for(f"/api/task/info/{task_id}", lambda body: body.get("state") == PROGRESS_STATE)
    assert info["state"] == PROGRESS_STATE
    assert info["result"] == f"job job-42: validating, step {step}, attempt {attempt}, {failures} failures"


def test_flower_sees_suture_workers_and_tasks_by_name_and_state(
    celery_stack: Any, scripted_model: Any, tmp_path: Path
) -> None:
    from suture.workers.producer import enqueue

    # Given real workers, Flower on their broker, and a job that needs one surgical round
    model = scripted_model(questions=4, imbalanced=1)
    stack = celery_stack(model.base_url)
    stack.start_worker(concurrency=4)
    server = start_flower(stack.settings.broker_url, tmp_path / "flower.log")
    try:
        handle = enqueue("quiz", DOCUMENT, questions=4, settings=stack.settings)
        result = handle.result(timeout_s=60)
        assert result["status"] == "delivered"

        # When Flower's API is read
        def chain_done(body: dict[str, Any]) -> bool:
            return {(t.get("name"), t.get("state")) for t in body.values()} >= EXPECTED

        tasks = server.wait_for("/api/tasks", chain_done)
        workers = server.wait_for("/api/workers?refresh=1", lambda body: len(body) >= 1)
    finally:
        stop_flower(server)

    # Then it lists every task of the chain by name and state, and the worker
    assert {(t.get("name"), t.get("state")) for t in tasks.values()} >= EXPECTED
    assert [name.split("-")[0] for name in workers] == ["w0"]
    # ...and shows ids only: never the document or the output
    shown = json.dumps(tasks)
    assert handle.id in shown
    assert DOCUMENT[:40] not in shown
    assert stack.env["OPENAI_API_KEY"] not in shown
    for question in result["output"]["questions"]:
        assert question["question"] not in shown


def test_progress_reporting_never_fails_the_task_when_the_broker_is_down() -> None:
    # Given a task whose event broker does not answer
    app = Celery("suture-probe-down", broker="redis://127.0.0.1:1/0")

    @app.task(bind=True, name="suture.probe_down")
    def probe(self: Any) -> None:
        pass

    probe.push_request(id=str(uuid.uuid4()), hostname="probe@test")
    try:
        # When it reports progress, then nothing is raised into the task
        report_progress(probe, "job-1", step=0, attempt=1, failures=0, status="running")
    finally:
        probe.pop_request()
        app.close()


def test_flower_shows_progress_while_a_job_runs_and_how_each_job_ended(
    celery_stack: Any, scripted_model: Any, tmp_path: Path
) -> None:
    from suture.workers.producer import enqueue
    from suture.workers.runtime.app import configure
    from suture.workers.store.job_store import get_store
    from tests.workers.runtime.corrupt import CANARY, corrupt_job

    # Given a worker without Sentry, Flower on its broker, and a slow model that always leaves one question
    # imbalanced
    model = scripted_model(questions=4, imbalanced=1, latency_s=1.5)
    stack = celery_stack(model.base_url)
    worker = stack.start_worker(concurrency=4)
    server = start_flower(stack.settings.broker_url, tmp_path / "flower.log")
    try:
        # When a job runs out of full-regeneration retries
        handle = enqueue("quiz", DOCUMENT, questions=4, policy="full-only", settings=stack.settings)

        # Then while its model call runs, Flower shows the attempt's task in PROGRESS, saying what it does
        def in_progress(body: dict[str, Any]) -> bool:
            return any(t.get("state") == PROGRESS_STATE for t in body.values())

        running = server.wait_for(f"/api/tasks?search={handle.id}", in_progress)
        [task] = [t for t in running.values() if t.get("state") == PROGRESS_STATE]
        assert task["name"] == "suture.attempt"
        assert task["result"].startswith(f"job {handle.id}: attempt ")
        assert handle.result(timeout_s=60)["status"] == "soft_delivered"

        # ...and searching for result:soft_delivered finds the task that ended it, with that result
        def ended(body: dict[str, Any]) -> bool:
            return any(handle.id in str(t.get("args")) for t in body.values())

        found = server.wait_for("/api/tasks?search=result:soft_delivered", ended)
        [ending] = [t for t in found.values() if handle.id in str(t.get("args"))]
        assert (ending["name"], ending["state"], ending["result"]) == (
            "suture.attempt",
            "SUCCESS",
            "'soft_delivered'",
        )

        # When a job meets an internal error
        job_id = corrupt_job(stack.settings)
        configure(stack.settings).send_task("suture.attempt", args=[job_id, 1], queue="suture.model")
        assert get_store(stack.settings).wait_result(job_id, timeout_s=30) is not None

        # Then its task ends FAILURE (scrubbed), and the delivery that gave the job up ends FAILURE too,
        # saying failed:internal (Flower's Failed tab lists the failed job)
        def failed(body: dict[str, Any]) -> bool:
            return {(t.get("name"), t.get("state")) for t in body.values()} >= {
                ("suture.attempt", "FAILURE"),
                ("suture.deliver", "FAILURE"),
            }

        tasks = server.wait_for(f"/api/tasks?search={job_id}", failed)
        by_name = {t["name"]: t for t in tasks.values()}
        assert by_name["suture.attempt"]["exception"].startswith(
            "InternalError('internal error in suture.attempt"
        )
        assert by_name["suture.deliver"]["exception"].startswith(f"JobFailed('failed:internal (job {job_id}")
        assert CANARY[:16] not in json.dumps(tasks)
        # ...and no watchdog tick ever became a task, though the clock swept every 2 s meanwhile
        assert not [t for t in server.get_json("/api/tasks").values() if t.get("name") == "suture.watchdog"]
    finally:
        stop_flower(server)
    # And with no DSN, the worker never spoke of Sentry
    assert "sentry" not in worker.log().lower()
