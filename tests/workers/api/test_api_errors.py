"""Bad requests to a real ``suture serve``: each one a problem (RFC 9457) naming what is wrong, never a
500."""

from __future__ import annotations

import socket
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import requests

from tests.fixtures.api_server import ApiServer
from tests.fixtures.receivers import WEBHOOK_SECRET
from tests.fixtures.scripted_model import document
from tests.fixtures.workers import REPO, CeleryStack

pytestmark = pytest.mark.integration

PROBLEM = "application/problem+json"
MISSING = "0123456789abcdef0123456789abcdef"


@pytest.fixture(scope="module")
def server(
    module_celery_stack: Callable[..., CeleryStack], module_api_server: Callable[..., ApiServer]
) -> Iterator[ApiServer]:
    """The API over a Redis of this module's own, small body limit, no workers (jobs stay queued).

    One server for every test here (each took seconds to start): each request they send is refused or only
    reads, so none leaves a job or a key another test could see.
    """
    stack = module_celery_stack("http://127.0.0.1:9/v1")
    yield module_api_server(stack, SUTURE_API__MAX_BODY_BYTES="65536")


def problem(response: requests.Response, status: int, code: str) -> dict[str, object]:
    assert response.status_code == status, response.text
    assert response.headers["content-type"] == PROBLEM
    body = dict(response.json())
    assert body["status"] == status and body["code"] == code
    assert body["type"] == f"urn:suture:problem:{code}" and body["title"] and body["detail"]
    return body


@pytest.mark.parametrize("key", ["", "wrong-key"])
def test_a_missing_or_wrong_key_is_401_and_the_key_is_never_echoed(server: ApiServer, key: str) -> None:
    response = server.call("POST", "/v1/jobs", key=key, json={"input": document(2)})
    body = problem(response, 401, "unauthorized")
    assert response.headers["WWW-Authenticate"].startswith("Bearer")
    assert "wrong-key" not in response.text and server.key not in response.text
    assert body["instance"] == "/v1/jobs"


def test_a_body_over_the_limit_is_413_declared_or_streamed(server: ApiServer) -> None:
    # Given a body larger than api.max_body_bytes, once with its length declared, once streamed
    big = b'{"input": "' + b"a" * 100_000 + b'"}'
    declared = server.call("POST", "/v1/jobs", data=big, headers={"Content-Type": "application/json"})
    streamed = server.call(
        "POST",
        "/v1/jobs",
        data=iter([big[:40_000], big[40_000:]]),
        headers={"Content-Type": "application/json"},
    )
    # Then both are refused with 413, and nothing was enqueued
    problem(declared, 413, "payload-too-large")
    problem(streamed, 413, "payload-too-large")
    assert server.call("GET", "/v1/stats").json()["jobs"]["unfinished"] == 0


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"input": document(2), "contract": "essay"}, "contract"),
        ({"input": document(2), "questions": 0}, "questions"),
        ({"input": document(2), "questions": "many"}, "questions"),
        ({"input": ""}, "input"),
        ({"input": "   \n "}, "input"),
        ({"questions": 3}, "input"),
        ({"input": document(2), "colour": "red"}, "colour"),
        ({"input": document(2), "callback": "https://169.254.169.254/latest/meta-data"}, "callback"),
        ({"input": document(2), "callback": "https://10.1.2.3/hook"}, "callback"),
        ({"input": document(2), "callback": "suture.watchdog"}, "callback"),
    ],
)
def test_an_unusable_job_is_422_naming_the_field(
    server: ApiServer, body: dict[str, object], field: str
) -> None:
    response = server.call("POST", "/v1/jobs", json=body)
    assert response.status_code == 422, response.text
    assert problem(response, 422, response.json()["code"])["field"] == field
    assert response.json()["code"] in ("invalid-request", "invalid-job")


@pytest.mark.parametrize(
    ("name", "content", "reason"),
    [
        ("course.pdf", b"%PDF-1.4 not really a pdf", "unreadable"),
        ("notes.txt", b"", "empty"),
        ("notes.txt", b"\x00\x01binary", "binary"),
        ("slides.pptx", b"PK...", "pptx"),
    ],
)
def test_an_unreadable_upload_is_422_on_the_file(
    server: ApiServer, name: str, content: bytes, reason: str
) -> None:
    response = server.call("POST", "/v1/jobs", files={"file": (name, content)})
    body = problem(response, 422, "unreadable-document")
    assert body["field"] == "file" and reason in str(body["detail"])
    assert "/tmp" not in str(body["detail"])  # the server's temporary path never shows


def test_unknown_jobs_bad_ids_and_other_media_types_are_problems(server: ApiServer) -> None:
    problem(server.call("GET", f"/v1/jobs/{MISSING}"), 404, "job-not-found")
    problem(server.call("POST", f"/v1/jobs/{MISSING}/cancel"), 404, "job-not-found")
    assert problem(server.call("GET", "/v1/jobs/../../etc"), 404, "not-found")
    assert problem(server.call("GET", "/v1/jobs/nothex"), 422, "invalid-request")["field"] == "job_id"
    response = server.call("POST", "/v1/jobs", data="input=x", headers={"Content-Type": "text/plain"})
    problem(response, 415, "unsupported-media-type")
    problem(
        server.call("POST", "/v1/jobs", data="{not json", headers={"Content-Type": "application/json"}),
        422,
        "invalid-request",
    )


def test_the_per_key_rate_limit_is_429_with_retry_after(
    celery_stack: Callable[..., CeleryStack], api_server: Callable[..., ApiServer]
) -> None:
    server = api_server(celery_stack("http://127.0.0.1:9/v1"), SUTURE_API__RATE_LIMIT_PER_MINUTE="3")
    codes = [server.call("GET", f"/v1/jobs/{MISSING}").status_code for _ in range(4)]
    limited = server.call("GET", "/v1/stats")
    assert codes[:3] == [404, 404, 404] and codes[3] == 429
    problem(limited, 429, "rate-limited")
    assert 1 <= int(limited.headers["Retry-After"]) <= 60


def test_health_needs_no_key_and_stats_read_as_the_cli(server: ApiServer) -> None:
    health = requests.get(server.url + "/healthz", timeout=10)
    assert (health.status_code, health.json()) == (200, {"status": "ok", "store": "ok", "broker": "ok"})
    stats = server.call("GET", "/v1/stats").json()
    assert stats["jobs"] == {"unfinished": 0, "past_deadline": 0, "waiting": {"interactive": 0, "bulk": 0}}
    assert set(stats["queues"]) >= {"suture.model", "suture.control"}


def test_serve_prints_its_url_first_and_refuses_a_taken_port(tmp_path: Path) -> None:
    # Given a port someone else listens on
    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]
        done = subprocess.run(
            [sys.executable, "-m", "suture", "serve", "--port", str(port)],
            cwd=REPO,
            capture_output=True,
            text=True,
            timeout=60,
            env={
                "PATH": "/usr/bin:/bin",
                "SUTURE_API__KEYS": '["k"]',
                "SUTURE_WEBHOOK__SECRET": WEBHOOK_SECRET,  # serve refuses to start without one
                "HOME": str(tmp_path),
                "SUTURE_BROKER_URL": "redis://127.0.0.1:9/0",
                "XDG_RUNTIME_DIR": str(tmp_path),
            },
        )
    # Then serve exits 2 with one line, no traceback
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.count("\n") == 1 and f"cannot listen on 127.0.0.1:{port}" in done.stderr


def test_metrics_need_a_key_and_give_the_cluster_gauges_in_prometheus_text(server: ApiServer) -> None:
    from prometheus_client.parser import text_string_to_metric_families

    # Given the API over a store with nothing queued
    # When /metrics is scraped without and with a key
    refused = server.call("GET", "/metrics", key="")
    scraped = server.call("GET", "/metrics")
    # Then a key is needed, and the text parses, with the cluster's gauges and the job counters' families
    problem(refused, 401, "unauthorized")
    assert scraped.status_code == 200 and scraped.headers["content-type"].startswith("text/plain")
    families = {f.name: f for f in text_string_to_metric_families(scraped.text)}
    assert [s.value for s in families["suture_jobs_unfinished"].samples] == [0.0]
    assert {"suture_queue_messages", "suture_jobs_finished"} <= set(families)
