"""A job's class as the HTTP API, the CLI and `suture status` take and show it (issue 20, section 1).

No worker runs: only what enqueue stores (the spec's ``priority``, the list the job waits in) is looked at.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from suture.workers.store.job_store import get_store
from tests.fixtures.api_server import ApiServer
from tests.fixtures.scripted_model import document
from tests.fixtures.workers import CeleryStack

pytestmark = pytest.mark.integration


def test_the_http_body_s_priority_is_stored_interactive_by_default_and_a_bad_one_is_422(
    celery_stack: Callable[..., CeleryStack],
    scripted_model: Callable[..., Any],
    api_server: Callable[..., ApiServer],
) -> None:
    # Given the API on a stack
    stack = celery_stack(scripted_model(questions=3).base_url)
    server = api_server(stack)
    body = {"input": document(3), "questions": 3}
    # When one job gives no class and another asks for bulk
    plain = server.call("POST", "/v1/jobs", json=body)
    bulk = server.call("POST", "/v1/jobs", json=body | {"priority": "bulk"})
    # Then the first is interactive, the second bulk, each waiting in its class's list under the caller's
    # tenant
    store = get_store(stack.settings)
    assert plain.status_code == bulk.status_code == 202, plain.text
    assert store.load(plain.json()["job_id"]).spec["priority"] == "interactive"
    assert store.load(bulk.json()["job_id"]).spec["priority"] == "bulk"
    counts = store.waiting.counts()
    assert sum(counts["interactive"].values()) == 1 and sum(counts["bulk"].values()) == 1
    # And a class that does not exist is a 422 naming the field
    refused = server.call("POST", "/v1/jobs", json=body | {"priority": "urgent"})
    assert refused.status_code == 422 and "priority" in refused.text


def test_the_cli_takes_priority_and_status_shows_it(
    celery_stack: Callable[..., CeleryStack], scripted_model: Callable[..., Any], tmp_path: Path
) -> None:
    stack = celery_stack(scripted_model(questions=3).base_url)
    source = tmp_path / "doc.txt"
    source.write_text(document(3) * 2)
    # When a job is enqueued from the CLI as bulk, and another with the default class
    bulk = stack.cli("enqueue", str(source), "--questions", "3", "--priority", "bulk")
    plain = stack.cli("enqueue", str(source), "--questions", "3")
    assert bulk.returncode == plain.returncode == 0, bulk.stderr
    # Then `suture status --json` shows each one's class, and plain `status` prints the status alone
    shown = json.loads(stack.cli("status", bulk.stdout.strip(), "--json").stdout)
    assert shown == {"job_id": bulk.stdout.strip(), "status": "queued", "priority": "bulk"}
    assert json.loads(stack.cli("status", plain.stdout.strip(), "--json").stdout)["priority"] == "interactive"
    assert stack.cli("status", bulk.stdout.strip()).stdout == "queued\n"
    # And a class that does not exist is refused by the argument parser (exit 2)
    assert stack.cli("enqueue", str(source), "--priority", "urgent").returncode == 2


def test_an_upload_s_priority_field_is_stored_and_a_bad_one_is_422(
    celery_stack: Callable[..., CeleryStack],
    scripted_model: Callable[..., Any],
    api_server: Callable[..., ApiServer],
) -> None:
    # Given the API on a stack
    stack = celery_stack(scripted_model(questions=3).base_url)
    server = api_server(stack)
    upload = {"file": ("course.md", document(3).encode())}
    # When a document is uploaded as bulk, and another with no class
    bulk = server.call("POST", "/v1/jobs", files=upload, data={"questions": "3", "priority": "bulk"})
    plain = server.call("POST", "/v1/jobs", files=upload, data={"questions": "3"})
    # Then the first is stored bulk, the second interactive
    assert bulk.status_code == plain.status_code == 202, bulk.text
    store = get_store(stack.settings)
    assert store.load(bulk.json()["job_id"]).spec["priority"] == "bulk"
    assert store.load(plain.json()["job_id"]).spec["priority"] == "interactive"
    # And a class that does not exist is a 422 naming the field
    refused = server.call("POST", "/v1/jobs", files=upload, data={"priority": "urgent"})
    assert refused.status_code == 422 and "priority" in refused.text
